-- +goose Up
-- A new message's terms enter the full-text index when the work of its
-- transaction ends, with those of the other messages of the batch, in one
-- statement written by the program (internal/store/pending.go): the index
-- then writes one segment per batch, not one per message. Edits and
-- deletions keep their triggers.
DROP TRIGGER message_terms_insert;

-- +goose Down
-- +goose StatementBegin
CREATE TRIGGER message_terms_insert AFTER INSERT ON messages WHEN new.body <> '' BEGIN
    INSERT INTO message_terms (rowid, terms) VALUES (new.seq, matchpoint_message_terms(new.conversation_id, new.body));
END;
-- +goose StatementEnd
