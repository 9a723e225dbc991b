-- +goose Up
-- The conversation's id joins the body's words in each message's text
-- vector (SQLite's index has it as a column of its own), so that a search
-- over the caller's conversations is one GIN lookup: the index intersects a
-- common word with a few conversations instead of reading every message
-- that holds the word.
DROP INDEX messages_search;
ALTER TABLE messages DROP COLUMN search_vector;
ALTER TABLE messages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS
    (to_tsvector('english', body) || array_to_tsvector(ARRAY[conversation_id])) STORED;
CREATE INDEX messages_search ON messages USING GIN (search_vector);

-- +goose Down
DROP INDEX messages_search;
ALTER TABLE messages DROP COLUMN search_vector;
ALTER TABLE messages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED;
CREATE INDEX messages_search ON messages USING GIN (search_vector);
