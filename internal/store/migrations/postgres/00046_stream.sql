-- +goose Up
-- The real-time stream's log: one row per recipient of every change a
-- client's stream shows (a message, an edit, a read marker, a notification),
-- written in the change's own transaction. A reconnect with Last-Event-ID
-- replays the recipient's rows after that sequence number, so nothing sent
-- while a client was away, or while its node restarted, is lost.
CREATE TABLE stream_events (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id),
    kind       TEXT NOT NULL,
    data       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX stream_events_user ON stream_events (user_id, seq);
CREATE INDEX stream_events_created ON stream_events (created_at);

-- +goose Down
DROP TABLE stream_events;
