-- +goose Up
-- Suspension of an account: while suspended_at is set and suspended_until is
-- NULL (indefinite) or still ahead, no credential of the account works. The
-- columns sit on users so that the queries that check every credential read
-- them in the same row they already read.
ALTER TABLE users ADD COLUMN suspended_at BIGINT;
ALTER TABLE users ADD COLUMN suspended_until BIGINT;
-- The few suspended accounts, which recommendations leave out.
CREATE INDEX users_suspended ON users (suspended_until) WHERE suspended_at IS NOT NULL;

-- Cases of the review queue: one open content case per target, merging its
-- reports and engine flags; an appeal is a case of its own that names the
-- decision it contests and the operator who may not resolve it.
CREATE TABLE moderation_cases (
    id           TEXT PRIMARY KEY,
    kind         TEXT NOT NULL,
    target_type  TEXT NOT NULL,
    target_id    TEXT NOT NULL,
    subject_id   TEXT NOT NULL,
    status       TEXT NOT NULL,
    reasons      TEXT NOT NULL DEFAULT '[]',
    report_count INTEGER NOT NULL DEFAULT 0,
    risk_score   REAL NOT NULL DEFAULT 0,
    evidence     TEXT NOT NULL DEFAULT '{}',
    held         INTEGER NOT NULL DEFAULT 0,
    automated    INTEGER NOT NULL DEFAULT 0,
    decision_id  TEXT,
    operator_id  TEXT,
    details      TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    closed_at    BIGINT
);
CREATE UNIQUE INDEX moderation_cases_target ON moderation_cases (target_type, target_id) WHERE status = 'open' AND kind = 'content';
CREATE UNIQUE INDEX moderation_cases_appeal ON moderation_cases (decision_id) WHERE kind = 'appeal';
CREATE INDEX moderation_cases_queue ON moderation_cases (status, risk_score, id);
CREATE INDEX moderation_cases_subject ON moderation_cases (subject_id);

-- Reports by users; evidence is the reported text as it was when reported.
CREATE TABLE moderation_reports (
    id          TEXT PRIMARY KEY,
    case_id     TEXT NOT NULL REFERENCES moderation_cases(id),
    reporter_id TEXT NOT NULL,
    target_type TEXT NOT NULL,
    target_id   TEXT NOT NULL,
    subject_id  TEXT NOT NULL,
    reason      TEXT NOT NULL,
    details     TEXT NOT NULL DEFAULT '',
    evidence    TEXT NOT NULL DEFAULT '{}',
    created_at  BIGINT NOT NULL
);
CREATE INDEX moderation_reports_case ON moderation_reports (case_id, id);
CREATE INDEX moderation_reports_subject ON moderation_reports (subject_id, created_at);
CREATE INDEX moderation_reports_reporter ON moderation_reports (reporter_id, id);

-- Every decision, by the engine (actor_id NULL, automated) or by an
-- operator: the audit log and what a statement of reasons is made from.
CREATE TABLE moderation_decisions (
    id             TEXT PRIMARY KEY,
    case_id        TEXT,
    target_type    TEXT NOT NULL,
    target_id      TEXT NOT NULL,
    subject_id     TEXT NOT NULL,
    actor_id       TEXT,
    automated      INTEGER NOT NULL,
    action         TEXT NOT NULL,
    reason         TEXT NOT NULL DEFAULT '',
    categories     TEXT NOT NULL DEFAULT '[]',
    engine_version TEXT NOT NULL DEFAULT '',
    ends_at        BIGINT,
    created_at     BIGINT NOT NULL
);
CREATE INDEX moderation_decisions_subject ON moderation_decisions (subject_id, id);

-- Behaviour signals of a user, recomputed in the background.
CREATE TABLE moderation_risk (
    user_id    TEXT PRIMARY KEY REFERENCES users(id),
    risk_score REAL NOT NULL,
    signals    TEXT NOT NULL DEFAULT '{}',
    updated_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE moderation_risk;
DROP TABLE moderation_decisions;
DROP TABLE moderation_reports;
DROP TABLE moderation_cases;
DROP INDEX users_suspended;
ALTER TABLE users DROP COLUMN suspended_until;
ALTER TABLE users DROP COLUMN suspended_at;
