-- +goose Up
-- How a profile's coordinates were obtained: 'client' (sent by the app),
-- 'gazetteer' (resolved from the place label) or 'none'.
ALTER TABLE users ADD COLUMN location_source TEXT NOT NULL DEFAULT 'none';
UPDATE users SET location_source = 'client' WHERE latitude IS NOT NULL;

-- Match requests and their lifecycle. pair_key is the two user ids in order,
-- so that one pending or accepted match per pair holds on every node.
CREATE TABLE matches (
    id                  TEXT PRIMARY KEY,
    user1_id            TEXT NOT NULL REFERENCES users(id),
    user2_id            TEXT NOT NULL REFERENCES users(id),
    pair_key            TEXT NOT NULL,
    sport               TEXT NOT NULL DEFAULT '',
    message             TEXT NOT NULL DEFAULT '',
    compatibility_score INTEGER NOT NULL,
    common_sports       TEXT NOT NULL DEFAULT '[]',
    status              TEXT NOT NULL,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL,
    expires_at          BIGINT NOT NULL,
    -- when it left pending: accepted, declined, expired or cancelled
    closed_at           BIGINT
);
CREATE UNIQUE INDEX matches_one_open ON matches (pair_key) WHERE status IN ('pending', 'accepted');
CREATE INDEX matches_pair ON matches (pair_key, status);
CREATE INDEX matches_user1 ON matches (user1_id, id);
CREATE INDEX matches_user2 ON matches (user2_id, id);
CREATE INDEX matches_expiry ON matches (expires_at) WHERE status = 'pending';

-- What matching reads to find candidates near someone: one row per sport of
-- every profile that may be recommended, keyed by sport and grid cell so that
-- a search reads a few index ranges around the caller. Rows carry all the
-- score needs, so candidates are scored without reading their profiles.
CREATE TABLE match_index (
    sport        TEXT NOT NULL,
    cell         BIGINT NOT NULL,
    user_id      TEXT NOT NULL REFERENCES users(id),
    skill        INTEGER NOT NULL,
    latitude     DOUBLE PRECISION NOT NULL,
    longitude    DOUBLE PRECISION NOT NULL,
    radius_km    DOUBLE PRECISION NOT NULL,
    levels       TEXT NOT NULL,
    availability BLOB NOT NULL,
    active_at    BIGINT NOT NULL,
    pending_in   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (sport, cell, user_id)
) WITHOUT ROWID;
CREATE INDEX match_index_user ON match_index (user_id);

-- How often a candidate was shown to a viewer without either acting, and
-- until when it is held back after too many showings.
CREATE TABLE match_impressions (
    viewer_id        TEXT NOT NULL REFERENCES users(id),
    candidate_id     TEXT NOT NULL REFERENCES users(id),
    shown            INTEGER NOT NULL,
    last_shown_at    BIGINT NOT NULL,
    suppressed_until BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (viewer_id, candidate_id)
);
CREATE INDEX match_impressions_candidate ON match_impressions (candidate_id);

-- +goose Down
DROP TABLE match_impressions;
DROP TABLE match_index;
DROP TABLE matches;
ALTER TABLE users DROP COLUMN location_source;
