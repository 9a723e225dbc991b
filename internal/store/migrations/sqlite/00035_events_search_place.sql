-- +goose Up
-- PostgreSQL indexes an event's words and place cells together here;
-- SQLite's full-text index has held both since 00030.
SELECT 1;

-- +goose Down
SELECT 1;
