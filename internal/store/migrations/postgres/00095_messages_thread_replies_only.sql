-- +goose Up
-- The thread index holds replies only: the queries that use it look a
-- thread's replies up by its root (thread_id = ...), and the top-level
-- messages, most of them, each wrote an entry under NULL that none reads
-- (a conversation's top-level history follows messages_position).
DROP INDEX messages_thread;
CREATE INDEX messages_thread ON messages (thread_id, conv_seq) WHERE thread_id IS NOT NULL;

-- +goose Down
DROP INDEX messages_thread;
CREATE INDEX messages_thread ON messages (thread_id, conv_seq);
