-- +goose Up
-- The moderation engine's answer on a delivered message it warned about
-- (JSON), shown to its readers so their apps can ask "does this bother you?".
ALTER TABLE messages ADD COLUMN moderation TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE messages DROP COLUMN moderation;
