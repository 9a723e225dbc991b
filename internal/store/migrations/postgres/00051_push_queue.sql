-- +goose Up
-- Push targets: a Web Push subscription (token is its endpoint, with the
-- browser's P-256 key and auth secret), an APNs device token or an FCM
-- registration token. A target belongs to one account at a time.
CREATE TABLE push_devices (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id),
    platform     TEXT NOT NULL,
    token        TEXT NOT NULL,
    p256dh       TEXT NOT NULL DEFAULT '',
    auth         TEXT NOT NULL DEFAULT '',
    name         TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT
);
CREATE UNIQUE INDEX push_devices_target ON push_devices (platform, token);
CREATE INDEX push_devices_user ON push_devices (user_id, id);

-- The durable queue of push and email work, written in the transaction of
-- the notification. A job is leased by one node at a time (lease_owner,
-- lease_until), tried not before run_at (quiet hours, backoff) and deleted
-- when it is done for good. sent_at is when it was first handed out.
CREATE TABLE notification_jobs (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    notification_id TEXT NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    user_id         TEXT NOT NULL REFERENCES users(id),
    channel         TEXT NOT NULL,
    device_id       TEXT REFERENCES push_devices(id) ON DELETE CASCADE,
    attempts        INTEGER NOT NULL DEFAULT 0,
    run_at          BIGINT NOT NULL,
    lease_owner     TEXT NOT NULL DEFAULT '',
    lease_until     BIGINT NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    sent_at         BIGINT,
    created_at      BIGINT NOT NULL
);
CREATE INDEX notification_jobs_due ON notification_jobs (run_at, seq);
CREATE INDEX notification_jobs_notification ON notification_jobs (notification_id, channel);
CREATE INDEX notification_jobs_user ON notification_jobs (user_id);
CREATE INDEX notification_jobs_device ON notification_jobs (device_id);
CREATE INDEX notification_jobs_lease ON notification_jobs (lease_owner);

-- +goose Down
DROP TABLE notification_jobs;
DROP TABLE push_devices;
