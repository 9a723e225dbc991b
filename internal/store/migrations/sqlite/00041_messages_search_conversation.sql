-- +goose Up
-- PostgreSQL's text vector of a message gains its conversation's id here;
-- SQLite's full-text index has held it as a column since 00040.
SELECT 1;

-- +goose Down
SELECT 1;
