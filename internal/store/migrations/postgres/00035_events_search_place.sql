-- +goose Up
-- Words and place together, as SQLite's full-text index holds them: a
-- search for words near a place asks this index for "the words, in one of
-- these grid cells" and reads only the events that match both, where the
-- place index alone would read every event around a city to test its
-- words. Without fastupdate, new events go straight into the index rather
-- than into a pending list that every search would scan until the next
-- vacuum (up to 4 MB): a search's cost stays put, an event's insert takes
-- a little longer.
CREATE INDEX events_search_place ON events USING GIN ((search_vector || to_tsvector('simple', place_cells))) WITH (fastupdate = off);

-- +goose Down
DROP INDEX events_search_place;
