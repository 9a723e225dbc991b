-- +goose Up
-- Each node keeps the API keys that requests present, with their owners'
-- accounts, in memory (see credcache.go). These triggers tell every node,
-- through NOTIFY on the channel matchpoint_credentials, whose credentials
-- changed, whatever made the change: the service, an operator command or
-- a hand-written UPDATE. PostgreSQL delivers a notification only when its
-- transaction commits, and in commit order. The payload lists the owners'
-- ids, separated by commas, or is '*' when a statement touched too many to
-- list (a bulk seed): then nodes drop everything.
-- +goose StatementBegin
CREATE FUNCTION matchpoint_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids text[];
BEGIN
    -- The transition tables of a statement-level trigger: old_rows for a
    -- DELETE, new_rows otherwise. users names its owner id, the others user_id.
    IF TG_OP = 'DELETE' AND TG_TABLE_NAME = 'users' THEN
        SELECT array_agg(u) INTO ids FROM (SELECT DISTINCT id AS u FROM old_rows LIMIT 101) s;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(u) INTO ids FROM (SELECT DISTINCT user_id AS u FROM old_rows LIMIT 101) s;
    ELSIF TG_TABLE_NAME = 'users' THEN
        SELECT array_agg(u) INTO ids FROM (SELECT DISTINCT id AS u FROM new_rows LIMIT 101) s;
    ELSE
        SELECT array_agg(u) INTO ids FROM (SELECT DISTINCT user_id AS u FROM new_rows LIMIT 101) s;
    END IF;
    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM pg_notify('matchpoint_credentials', CASE WHEN cardinality(ids) > 100 THEN '*' ELSE array_to_string(ids, ',') END);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- An API key changes what it grants when it is revoked, re-scoped or moved;
-- last_used_at, written once a minute per key in use, changes nothing, so a
-- row trigger with a condition leaves it out.
-- +goose StatementBegin
CREATE FUNCTION matchpoint_api_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('matchpoint_credentials', OLD.user_id);
    ELSE
        PERFORM pg_notify('matchpoint_credentials', NEW.user_id);
        IF OLD.user_id <> NEW.user_id THEN
            PERFORM pg_notify('matchpoint_credentials', OLD.user_id);
        END IF;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- A new account or a new key is in no node's memory: inserts into users and
-- api_keys need no notice. A user's sports are part of the account a key
-- carries, and a profile update replaces them.
CREATE TRIGGER users_credentials_updated AFTER UPDATE ON users
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION matchpoint_credentials_changed();
CREATE TRIGGER users_credentials_deleted AFTER DELETE ON users
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION matchpoint_credentials_changed();
CREATE TRIGGER user_sports_credentials_inserted AFTER INSERT ON user_sports
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION matchpoint_credentials_changed();
CREATE TRIGGER user_sports_credentials_updated AFTER UPDATE ON user_sports
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION matchpoint_credentials_changed();
CREATE TRIGGER user_sports_credentials_deleted AFTER DELETE ON user_sports
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION matchpoint_credentials_changed();
CREATE TRIGGER api_keys_credentials_updated AFTER UPDATE ON api_keys FOR EACH ROW
    WHEN ((OLD.user_id, OLD.key_hash, OLD.name, OLD.scopes, OLD.revoked_at) IS DISTINCT FROM (NEW.user_id, NEW.key_hash, NEW.name, NEW.scopes, NEW.revoked_at))
    EXECUTE FUNCTION matchpoint_api_key_changed();
CREATE TRIGGER api_keys_credentials_deleted AFTER DELETE ON api_keys FOR EACH ROW
    EXECUTE FUNCTION matchpoint_api_key_changed();

-- +goose Down
DROP TRIGGER api_keys_credentials_deleted ON api_keys;
DROP TRIGGER api_keys_credentials_updated ON api_keys;
DROP TRIGGER user_sports_credentials_deleted ON user_sports;
DROP TRIGGER user_sports_credentials_updated ON user_sports;
DROP TRIGGER user_sports_credentials_inserted ON user_sports;
DROP TRIGGER users_credentials_deleted ON users;
DROP TRIGGER users_credentials_updated ON users;
DROP FUNCTION matchpoint_api_key_changed();
DROP FUNCTION matchpoint_credentials_changed();
