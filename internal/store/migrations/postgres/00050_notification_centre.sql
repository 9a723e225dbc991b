-- +goose Up
-- The notification centre: a record may be kept out of the centre (the
-- user turned in-app off for its kind: it exists only to be pushed or
-- mailed, and is stored read so it never absorbs another), and remembers
-- when an app acknowledged receiving it. The centre lists by latest activity.
ALTER TABLE notifications ADD COLUMN in_app BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE notifications ADD COLUMN delivered_at BIGINT;
CREATE INDEX notifications_feed ON notifications (user_id, updated_at, id);
CREATE INDEX notifications_unread ON notifications (user_id) WHERE read_at IS NULL;

-- Preferences: only what differs from the defaults of the code, per kind and
-- channel ({"message.new": {"push": false}}), and quiet hours as local HH:MM
-- in the user's time zone ('' when off).
CREATE TABLE notification_settings (
    user_id     TEXT PRIMARY KEY REFERENCES users(id),
    channels    TEXT NOT NULL DEFAULT '{}',
    quiet_start TEXT NOT NULL DEFAULT '',
    quiet_end   TEXT NOT NULL DEFAULT '',
    updated_at  BIGINT NOT NULL
);

-- +goose Down
DROP TABLE notification_settings;
DROP INDEX notifications_unread;
DROP INDEX notifications_feed;
ALTER TABLE notifications DROP COLUMN delivered_at;
ALTER TABLE notifications DROP COLUMN in_app;
