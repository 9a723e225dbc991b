-- +goose Up
-- Every statement that adds rows to the real-time stream tells every node,
-- through NOTIFY on the channel matchpoint_stream (streamChannel in
-- stream.go), that there is something to read. PostgreSQL delivers it when
-- (and only if) the transaction commits, after its rows are visible, and
-- folds a transaction's identical notifications into one. Done here rather
-- than by a statement of the writer's own, which cost every change that
-- streams one more round trip to the server.
-- +goose StatementBegin
CREATE FUNCTION matchpoint_stream_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('matchpoint_stream', '');
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER stream_events_notify AFTER INSERT ON stream_events
    FOR EACH STATEMENT EXECUTE FUNCTION matchpoint_stream_written();

-- +goose Down
DROP TRIGGER stream_events_notify ON stream_events;
DROP FUNCTION matchpoint_stream_written();
