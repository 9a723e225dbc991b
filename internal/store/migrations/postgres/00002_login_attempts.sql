-- +goose Up
-- Failed sign-ins per login name (folded to lower case), for throttling
-- password guessing across every node.
CREATE TABLE login_attempts (
    login_key    TEXT PRIMARY KEY,
    failures     INTEGER NOT NULL,
    window_start BIGINT NOT NULL,
    locked_until BIGINT NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE login_attempts;
