-- +goose Up
-- Times are INTEGER microseconds since the Unix epoch, in both dialects: the
-- service's clock is injectable, so the database never computes "now".

CREATE TABLE instance_keys (
    name       TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE users (
    id                 TEXT PRIMARY KEY,
    email              TEXT,
    email_key          TEXT CONSTRAINT users_email_key_uniq UNIQUE,
    username           TEXT NOT NULL,
    username_key       TEXT NOT NULL CONSTRAINT users_username_key_uniq UNIQUE,
    first_name         TEXT NOT NULL DEFAULT '',
    last_name          TEXT NOT NULL DEFAULT '',
    password_hash      TEXT,
    location           TEXT NOT NULL DEFAULT '',
    latitude           REAL,
    longitude          REAL,
    travel_radius_km   REAL NOT NULL DEFAULT 25,
    bio                TEXT NOT NULL DEFAULT '',
    timezone           TEXT NOT NULL DEFAULT 'UTC',
    availability       TEXT NOT NULL DEFAULT '[]',
    profile_visibility TEXT NOT NULL DEFAULT 'members',
    discoverable       INTEGER NOT NULL DEFAULT 1,
    show_location      INTEGER NOT NULL DEFAULT 1,
    verified           INTEGER NOT NULL DEFAULT 0,
    role               TEXT NOT NULL DEFAULT 'member',
    tier               TEXT NOT NULL DEFAULT 'free',
    rate_limit         INTEGER,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    deleted_at         INTEGER
);

CREATE TABLE user_sports (
    user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    sport       TEXT NOT NULL,
    skill_level TEXT,
    position    INTEGER NOT NULL,
    PRIMARY KEY (user_id, sport)
);
CREATE INDEX user_sports_sport ON user_sports (sport, skill_level);

CREATE TABLE verification_requests (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    status        TEXT NOT NULL,
    document_type TEXT NOT NULL,
    note          TEXT NOT NULL DEFAULT '',
    reviewer_id   TEXT,
    review_note   TEXT NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL,
    reviewed_at   INTEGER
);
CREATE UNIQUE INDEX verification_one_pending ON verification_requests (user_id) WHERE status = 'pending';
CREATE INDEX verification_status ON verification_requests (status, id);

CREATE TABLE web_sessions (
    id         TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX web_sessions_user ON web_sessions (user_id);

CREATE TABLE oauth_clients (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    owner_id      TEXT NOT NULL REFERENCES users(id),
    secret_hash   TEXT,
    secret_hint   TEXT NOT NULL DEFAULT '',
    redirect_uris TEXT NOT NULL,
    scopes        TEXT NOT NULL,
    grant_types   TEXT NOT NULL,
    public        INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    revoked_at    INTEGER
);
CREATE INDEX oauth_clients_owner ON oauth_clients (owner_id);

-- A grant is one authorization by a user of a client: the family of every
-- access and refresh token that descends from one code.
CREATE TABLE oauth_grants (
    id         TEXT PRIMARY KEY,
    client_id  TEXT NOT NULL REFERENCES oauth_clients(id),
    user_id    TEXT NOT NULL REFERENCES users(id),
    scope      TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE INDEX oauth_grants_user ON oauth_grants (user_id);

CREATE TABLE oauth_codes (
    id                    TEXT PRIMARY KEY,
    code_hash             TEXT NOT NULL UNIQUE,
    client_id             TEXT NOT NULL REFERENCES oauth_clients(id),
    user_id               TEXT NOT NULL REFERENCES users(id),
    redirect_uri          TEXT NOT NULL,
    scope                 TEXT NOT NULL,
    code_challenge        TEXT NOT NULL DEFAULT '',
    code_challenge_method TEXT NOT NULL DEFAULT '',
    created_at            INTEGER NOT NULL,
    expires_at            INTEGER NOT NULL,
    used_at               INTEGER,
    grant_id              TEXT
);

CREATE TABLE oauth_access_tokens (
    id         TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    grant_id   TEXT NOT NULL REFERENCES oauth_grants(id),
    scope      TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE INDEX oauth_access_tokens_grant ON oauth_access_tokens (grant_id);

CREATE TABLE oauth_refresh_tokens (
    id         TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    grant_id   TEXT NOT NULL REFERENCES oauth_grants(id),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id);

CREATE TABLE oauth_consents (
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    client_id  TEXT NOT NULL REFERENCES oauth_clients(id),
    scope      TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, client_id)
);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id),
    name         TEXT NOT NULL,
    key_hash     TEXT NOT NULL UNIQUE,
    hint         TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
);
CREATE INDEX api_keys_user ON api_keys (user_id, id);

CREATE TABLE outbox_events (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    type       TEXT NOT NULL,
    user_id    TEXT,
    payload    TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE idempotency_keys (
    owner         TEXT NOT NULL,
    key           TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    status        INTEGER NOT NULL DEFAULT 0,
    headers       TEXT NOT NULL DEFAULT '{}',
    body          TEXT NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (owner, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE outbox_events;
DROP TABLE api_keys;
DROP TABLE oauth_consents;
DROP TABLE oauth_refresh_tokens;
DROP TABLE oauth_access_tokens;
DROP TABLE oauth_codes;
DROP TABLE oauth_grants;
DROP TABLE oauth_clients;
DROP TABLE web_sessions;
DROP TABLE verification_requests;
DROP TABLE user_sports;
DROP TABLE users;
DROP TABLE instance_keys;
