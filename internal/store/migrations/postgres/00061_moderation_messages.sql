-- +goose Up
-- Behaviour signals read the messages of the last window (fan-out, the
-- same text to many, links by new accounts) in the background.
CREATE INDEX messages_created ON messages (created_at);

-- +goose Down
DROP INDEX messages_created;
