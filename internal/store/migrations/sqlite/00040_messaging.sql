-- +goose Up
-- Conversations: direct (two people; direct_key is the ordered pair, so the
-- same two always get the same one) or group (a title, admins). last_seq
-- counts the conversation's messages: a send takes the next number under
-- the conversation's row lock, so numbers commit in order and a reader
-- paging forward by them never skips one that commits later.
CREATE TABLE conversations (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    title       TEXT NOT NULL DEFAULT '',
    creator_id  TEXT NOT NULL REFERENCES users(id),
    direct_key  TEXT CONSTRAINT conversations_direct_key UNIQUE,
    event_id    TEXT CONSTRAINT conversations_event_key UNIQUE REFERENCES events(id),
    last_seq    BIGINT NOT NULL DEFAULT 0,
    activity_at BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);

-- Members, past and present: left_at is set when someone leaves or is
-- removed (adding them again clears it). read_seq is the read marker as a
-- message number; it only moves forward.
CREATE TABLE conversation_members (
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    user_id         TEXT NOT NULL REFERENCES users(id),
    role            TEXT NOT NULL DEFAULT 'member',
    joined_at       BIGINT NOT NULL,
    left_at         BIGINT,
    muted_until     BIGINT,
    read_seq        BIGINT NOT NULL DEFAULT 0,
    read_message_id TEXT,
    read_at         BIGINT,
    PRIMARY KEY (conversation_id, user_id)
);
CREATE INDEX conversation_members_user ON conversation_members (user_id, conversation_id);

-- Messages. seq is the row's integer key (the full-text index points at
-- it); conv_seq the message's number in its conversation; thread_id the
-- root message of the thread a reply belongs to (threads are one level).
CREATE TABLE messages (
    seq             INTEGER PRIMARY KEY,
    id              TEXT NOT NULL CONSTRAINT messages_id_key UNIQUE,
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    conv_seq        BIGINT NOT NULL,
    sender_id       TEXT NOT NULL REFERENCES users(id),
    thread_id       TEXT,
    reply_count     INTEGER NOT NULL DEFAULT 0,
    last_reply_at   BIGINT,
    body            TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    edited_at       BIGINT,
    deleted_at      BIGINT,
    sender_erased   BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE UNIQUE INDEX messages_position ON messages (conversation_id, conv_seq);
CREATE INDEX messages_thread ON messages (thread_id, conv_seq);
CREATE INDEX messages_sender ON messages (sender_id);

-- Full text of the body with the conversation's id beside it (one token:
-- '_' joins words), so a search limited to the caller's conversations is
-- answered inside the index. A deleted message's body is empty, so it
-- leaves the index with it.
CREATE VIRTUAL TABLE messages_fts USING fts5(body, conversation_id, content = 'messages', content_rowid = 'seq',
    tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'");
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

-- +goose Down
DROP TABLE messages_fts;
DROP TABLE messages;
DROP TABLE conversation_members;
DROP TABLE conversations;
