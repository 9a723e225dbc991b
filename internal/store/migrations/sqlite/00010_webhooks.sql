-- +goose Up
-- Webhook subscriptions. A subscription belongs to an account and remembers
-- the credential that made it (an API key, or an OAuth grant and its client)
-- and that credential's scopes: delivery re-checks both for every event, so
-- a subscriber never receives what it could not read through the API.
CREATE TABLE webhook_subscriptions (
    id                   TEXT PRIMARY KEY,
    user_id              TEXT NOT NULL REFERENCES users(id),
    api_key_id           TEXT REFERENCES api_keys(id),
    grant_id             TEXT REFERENCES oauth_grants(id),
    client_id            TEXT REFERENCES oauth_clients(id),
    scopes               TEXT NOT NULL,
    admin                BOOLEAN NOT NULL DEFAULT FALSE,
    transport            TEXT NOT NULL,
    url                  TEXT NOT NULL DEFAULT '',
    events               TEXT NOT NULL,
    description          TEXT NOT NULL DEFAULT '',
    status               TEXT NOT NULL,
    disabled_reason      TEXT NOT NULL DEFAULT '',
    -- Secrets are AES-GCM sealed with an instance key; the previous secret
    -- keeps signing until old_secret_until after a rotation.
    secret_enc           TEXT NOT NULL,
    old_secret_enc       TEXT NOT NULL DEFAULT '',
    old_secret_until     BIGINT NOT NULL DEFAULT 0,
    verify_due_at        BIGINT,
    verified_at          BIGINT,
    verify_attempted_at  BIGINT,
    verify_status_code   INTEGER,
    verify_error         TEXT NOT NULL DEFAULT '',
    verify_response      TEXT NOT NULL DEFAULT '',
    failing_since        BIGINT,
    last_seen_at         BIGINT,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);
CREATE INDEX webhook_subscriptions_user ON webhook_subscriptions (user_id, id);
CREATE INDEX webhook_subscriptions_admin ON webhook_subscriptions (admin, status);
CREATE INDEX webhook_subscriptions_verify ON webhook_subscriptions (verify_due_at) WHERE verify_due_at IS NOT NULL;

-- One delivery per event and subscription. The body is the outbox event's
-- (read when sending, so an erased account's redaction reaches deliveries
-- not yet sent); only test deliveries carry their own payload.
CREATE TABLE webhook_deliveries (
    id               TEXT PRIMARY KEY,
    subscription_id  TEXT NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
    event_seq        BIGINT REFERENCES outbox_events(seq) ON DELETE CASCADE,
    event_id         TEXT NOT NULL,
    event_type       TEXT NOT NULL,
    payload          TEXT,
    status           TEXT NOT NULL,
    manual           BOOLEAN NOT NULL DEFAULT FALSE,
    test             BOOLEAN NOT NULL DEFAULT FALSE,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  BIGINT NOT NULL,
    lease_owner      TEXT NOT NULL DEFAULT '',
    lease_until      BIGINT NOT NULL DEFAULT 0,
    last_status_code INTEGER,
    last_error       TEXT NOT NULL DEFAULT '',
    created_at       BIGINT NOT NULL,
    completed_at     BIGINT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id, id);
CREATE INDEX webhook_deliveries_lease ON webhook_deliveries (lease_owner) WHERE lease_owner <> '';
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_seq);
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);

-- Every attempt of a delivery, for the delivery log and the statistics.
CREATE TABLE webhook_attempts (
    delivery_id     TEXT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    number          INTEGER NOT NULL,
    subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
    started_at      BIGINT NOT NULL,
    duration_us     BIGINT NOT NULL,
    ok              BOOLEAN NOT NULL,
    status_code     INTEGER,
    error           TEXT NOT NULL DEFAULT '',
    response        TEXT NOT NULL DEFAULT '',
    next_retry_at   BIGINT,
    node            TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (delivery_id, number)
);
CREATE INDEX webhook_attempts_subscription ON webhook_attempts (subscription_id, started_at);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_subscriptions;
