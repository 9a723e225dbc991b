-- +goose Up
-- Sports events. seq is the row's integer key (the full-text index of
-- SQLite points at it); id is the public identifier.
CREATE TABLE events (
    seq                  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                   TEXT NOT NULL CONSTRAINT events_id_key UNIQUE,
    creator_id           TEXT NOT NULL REFERENCES users(id),
    series_id            TEXT,
    recurrence           TEXT NOT NULL DEFAULT '',
    title                TEXT NOT NULL,
    description          TEXT NOT NULL DEFAULT '',
    sport                TEXT NOT NULL,
    location             TEXT NOT NULL DEFAULT '',
    latitude             DOUBLE PRECISION,
    longitude            DOUBLE PRECISION,
    -- Grid cells of the place at five sizes ("g1x3696y2715 g2x..."), for
    -- SQLite's full-text index; PostgreSQL intersects its own indexes.
    place_cells          TEXT NOT NULL DEFAULT '',
    starts_at            BIGINT NOT NULL,
    ends_at              BIGINT NOT NULL,
    timezone             TEXT NOT NULL,
    max_participants     INTEGER NOT NULL,
    skill_min            INTEGER,
    skill_max            INTEGER,
    visibility           TEXT NOT NULL DEFAULT 'public',
    status               TEXT NOT NULL DEFAULT 'scheduled',
    cancel_reason        TEXT NOT NULL DEFAULT '',
    going_count          INTEGER NOT NULL DEFAULT 0,
    waitlist_count       INTEGER NOT NULL DEFAULT 0,
    maybe_count          INTEGER NOT NULL DEFAULT 0,
    attended_count       INTEGER NOT NULL DEFAULT 0,
    attended_going_count INTEGER NOT NULL DEFAULT 0,
    reminder_stage       INTEGER NOT NULL DEFAULT 0,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL,
    cancelled_at         BIGINT
);
CREATE INDEX events_upcoming ON events (status, starts_at, latitude, longitude);
CREATE INDEX events_place ON events (latitude, longitude);
CREATE INDEX events_creator ON events (creator_id, starts_at);
CREATE INDEX events_series ON events (series_id, starts_at);
CREATE INDEX events_reminders ON events (starts_at) WHERE status = 'scheduled' AND reminder_stage < 2;

-- Full text of title and description, ranked with the title first (SQLite:
-- an FTS5 table). A stored generated column, so a plan that tests it row by
-- row reads the vector instead of computing it; kept in step by the write
-- itself, in its transaction.
ALTER TABLE events ADD COLUMN search_vector tsvector GENERATED ALWAYS AS
    (setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', description), 'B')) STORED;
CREATE INDEX events_search ON events USING GIN (search_vector);

-- Answers. Waitlist positions are 1..n per event, kept dense by the
-- transaction that holds the event's row lock.
CREATE TABLE event_rsvps (
    id                TEXT PRIMARY KEY,
    event_id          TEXT NOT NULL REFERENCES events(id),
    user_id           TEXT NOT NULL REFERENCES users(id),
    status            TEXT NOT NULL,
    waitlist_position INTEGER,
    going_since       BIGINT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    CONSTRAINT event_rsvps_event_user UNIQUE (event_id, user_id)
);
CREATE INDEX event_rsvps_list ON event_rsvps (event_id, status, waitlist_position);
CREATE INDEX event_rsvps_user ON event_rsvps (user_id, status);

CREATE TABLE event_invitations (
    event_id   TEXT NOT NULL REFERENCES events(id),
    user_id    TEXT NOT NULL REFERENCES users(id),
    inviter_id TEXT NOT NULL REFERENCES users(id),
    created_at BIGINT NOT NULL,
    PRIMARY KEY (event_id, user_id)
);
CREATE INDEX event_invitations_user ON event_invitations (user_id);
CREATE INDEX event_invitations_inviter ON event_invitations (inviter_id);

CREATE TABLE event_checkins (
    event_id   TEXT NOT NULL REFERENCES events(id),
    user_id    TEXT NOT NULL REFERENCES users(id),
    created_at BIGINT NOT NULL,
    PRIMARY KEY (event_id, user_id)
);
CREATE INDEX event_checkins_user ON event_checkins (user_id);

-- +goose Down
DROP TABLE event_checkins;
DROP TABLE event_invitations;
DROP TABLE event_rsvps;
DROP TABLE events;
