-- +goose Up
-- Notification records, written by every domain in the transaction of the
-- change that causes them. An unread notification with a collapse key absorbs
-- later ones with the same key (one per conversation while unread).
CREATE TABLE notifications (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id),
    kind         TEXT NOT NULL,
    title        TEXT NOT NULL,
    body         TEXT NOT NULL DEFAULT '',
    data         TEXT NOT NULL DEFAULT '{}',
    collapse_key TEXT NOT NULL DEFAULT '',
    count        INTEGER NOT NULL DEFAULT 1,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    read_at      BIGINT
);
CREATE INDEX notifications_user ON notifications (user_id, id);
CREATE UNIQUE INDEX notifications_collapse ON notifications (user_id, collapse_key) WHERE read_at IS NULL AND collapse_key <> '';

-- Blocks: a block hides two people from each other everywhere (matching,
-- messaging, attendee lists), whichever of them made it.
CREATE TABLE user_blocks (
    blocker_id TEXT NOT NULL REFERENCES users(id),
    blocked_id TEXT NOT NULL REFERENCES users(id),
    created_at BIGINT NOT NULL,
    PRIMARY KEY (blocker_id, blocked_id)
);
CREATE INDEX user_blocks_blocked ON user_blocks (blocked_id, blocker_id);

-- +goose Down
DROP TABLE user_blocks;
DROP TABLE notifications;
