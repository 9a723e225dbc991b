-- +goose Up
-- Message text is indexed as terms of its conversation (each word behind
-- the conversation's key, made by matchpoint_message_terms, a function the
-- program registers; see internal/store/messaging_terms.go), so that a
-- search over a person's conversations reads only their matches. The
-- index keeps no copy of the text (contentless): snippets are cut from the
-- message's row. A deleted message's body is empty, and it has no terms.
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
DROP TABLE messages_fts;
CREATE VIRTUAL TABLE message_terms USING fts5(terms, content = '', contentless_delete = 1,
    tokenize = "porter unicode61 remove_diacritics 2");
INSERT INTO message_terms (rowid, terms) SELECT seq, matchpoint_message_terms(conversation_id, body) FROM messages WHERE body <> '';
-- +goose StatementBegin
CREATE TRIGGER message_terms_insert AFTER INSERT ON messages WHEN new.body <> '' BEGIN
    INSERT INTO message_terms (rowid, terms) VALUES (new.seq, matchpoint_message_terms(new.conversation_id, new.body));
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER message_terms_delete AFTER DELETE ON messages BEGIN
    DELETE FROM message_terms WHERE rowid = old.seq;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER message_terms_update AFTER UPDATE OF body ON messages WHEN old.body IS NOT new.body BEGIN
    DELETE FROM message_terms WHERE rowid = old.seq;
    INSERT INTO message_terms (rowid, terms) SELECT new.seq, matchpoint_message_terms(new.conversation_id, new.body) WHERE new.body <> '';
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE message_terms;
CREATE VIRTUAL TABLE messages_fts USING fts5(body, conversation_id, content = 'messages', content_rowid = 'seq',
    tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'");
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, body, conversation_id) VALUES (new.seq, new.body, new.conversation_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, body, conversation_id) VALUES ('delete', old.seq, old.body, old.conversation_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF body ON messages WHEN old.body IS NOT new.body BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, body, conversation_id) VALUES ('delete', old.seq, old.body, old.conversation_id);
    INSERT INTO messages_fts (rowid, body, conversation_id) VALUES (new.seq, new.body, new.conversation_id);
END;
-- +goose StatementEnd
