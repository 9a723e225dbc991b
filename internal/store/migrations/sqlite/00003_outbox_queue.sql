-- +goose Up
-- The outbox becomes a queue: each consumer has a pending row per event,
-- written in the event's own transaction, claimed with a lease and deleted
-- in the consumer's transaction. A reader of "seq > last" would skip an event
-- whose transaction took its number early and committed late.
CREATE TABLE outbox_pending (
    consumer    TEXT NOT NULL,
    seq         BIGINT NOT NULL REFERENCES outbox_events(seq) ON DELETE CASCADE,
    lease_owner TEXT NOT NULL DEFAULT '',
    lease_until BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (consumer, seq)
);
CREATE INDEX outbox_pending_claim ON outbox_pending (consumer, lease_until, seq);
CREATE INDEX outbox_pending_seq ON outbox_pending (seq);

-- Who may read what an event is about (space-separated user ids), so that
-- delivery applies the rule that a subscriber sees only what it could read.
ALTER TABLE outbox_events ADD COLUMN audience TEXT NOT NULL DEFAULT '';
CREATE INDEX outbox_events_user ON outbox_events (user_id);
CREATE INDEX outbox_events_created ON outbox_events (created_at);

-- +goose Down
DROP INDEX outbox_events_created;
DROP INDEX outbox_events_user;
ALTER TABLE outbox_events DROP COLUMN audience;
DROP TABLE outbox_pending;
