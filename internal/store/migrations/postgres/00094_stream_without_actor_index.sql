-- +goose Up
-- No query looks stream rows up by actor: an erased author's rows are found
-- through their messages (stream_events_message), and the stream's
-- visibility test reads actor_id from the row it already holds. Every
-- message wrote one index entry per recipient for nothing.
DROP INDEX stream_events_actor;

-- +goose Down
CREATE INDEX stream_events_actor ON stream_events (actor_id) WHERE actor_id IS NOT NULL;
