-- +goose Up
-- What a stream row is about, so the stream can keep showing only what the
-- API shows: a deleted message's or an erased author's text is blanked in
-- the rows that quote it (by message_id, actor_id), and a conversation's
-- message rows are not replayed to someone who left it or who blocks (or is
-- blocked by) their author (conversation_id, actor_id).
ALTER TABLE stream_events ADD COLUMN conversation_id TEXT;
ALTER TABLE stream_events ADD COLUMN message_id TEXT;
ALTER TABLE stream_events ADD COLUMN actor_id TEXT;
CREATE INDEX stream_events_message ON stream_events (message_id) WHERE message_id IS NOT NULL;
CREATE INDEX stream_events_actor ON stream_events (actor_id) WHERE actor_id IS NOT NULL;

-- +goose Down
DROP INDEX stream_events_actor;
DROP INDEX stream_events_message;
ALTER TABLE stream_events DROP COLUMN actor_id;
ALTER TABLE stream_events DROP COLUMN message_id;
ALTER TABLE stream_events DROP COLUMN conversation_id;
