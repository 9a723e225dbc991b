-- +goose Up
-- Request analytics: rollups per hour ('h') and per day ('d') of the API
-- requests made with a credential, per paying account (user_id), credential (API key
-- or OAuth client), and operation (method and route pattern). Nodes count
-- in memory and add their counts here in batches; nothing per request is
-- stored. bucket_start is the bucket's first microsecond (UTC).
CREATE TABLE analytics_usage (
    granularity  TEXT NOT NULL,
    bucket_start BIGINT NOT NULL,
    user_id      TEXT NOT NULL,
    credential   TEXT NOT NULL,
    operation    TEXT NOT NULL,
    requests     BIGINT NOT NULL,
    errors_4xx   BIGINT NOT NULL,
    errors_5xx   BIGINT NOT NULL,
    PRIMARY KEY (granularity, user_id, bucket_start, credential, operation)
);
CREATE INDEX analytics_usage_start ON analytics_usage (bucket_start);

-- The latency sketch of each rollup row: request counts per logarithmic
-- latency bin (2 % relative accuracy). Bins add up across nodes, hours and
-- days, so percentiles of any group of rows come from their summed bins.
CREATE TABLE analytics_latency (
    granularity  TEXT NOT NULL,
    bucket_start BIGINT NOT NULL,
    user_id      TEXT NOT NULL,
    credential   TEXT NOT NULL,
    operation    TEXT NOT NULL,
    bin          INTEGER NOT NULL,
    n            BIGINT NOT NULL,
    PRIMARY KEY (granularity, user_id, bucket_start, credential, operation, bin)
);
CREATE INDEX analytics_latency_start ON analytics_latency (bucket_start);

-- Who used the API on which day (UTC), for daily, weekly and monthly
-- active users.
CREATE TABLE analytics_active_users (
    day     BIGINT NOT NULL,
    user_id TEXT NOT NULL,
    PRIMARY KEY (day, user_id)
);
CREATE INDEX analytics_active_users_user ON analytics_active_users (user_id);

-- +goose Down
DROP TABLE analytics_active_users;
DROP TABLE analytics_latency;
DROP TABLE analytics_usage;
