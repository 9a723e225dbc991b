-- +goose Up
-- Two indexes that every write paid for and no query needs:
-- notifications (user_id, id) is covered by notifications_feed, which
-- starts with user_id too and is the one lists walk; the stream's
-- created_at index only served the janitor, which now finds the expired
-- rows by sequence number (they are the oldest). A message's notification
-- and stream rows each had one index more to write.
DROP INDEX notifications_user;
DROP INDEX stream_events_created;

-- +goose Down
CREATE INDEX stream_events_created ON stream_events (created_at);
CREATE INDEX notifications_user ON notifications (user_id, id);
