-- Ordering by display id must be natural: TU-X-TSK-999 before TU-X-TSK-1000,
-- which text order gets wrong past 999. display_sort is the display id with
-- its number zero-padded to 10 digits (domain.DisplaySortKey), written with
-- the task and ordered on instead.
--
-- SQLite dialect. db/migrations/postgres/0006_display_sort.sql has the same
-- columns and index.

-- +goose Up
ALTER TABLE tasks ADD COLUMN display_sort TEXT NOT NULL DEFAULT '';

UPDATE tasks SET display_sort = RTRIM(display_id, '0123456789')
    || SUBSTR('0000000000' || SUBSTR(display_id, LENGTH(RTRIM(display_id, '0123456789')) + 1), -10, 10);

CREATE INDEX tasks_project_id_display_sort_idx ON tasks (project_id, display_sort);

-- +goose Down
DROP INDEX tasks_project_id_display_sort_idx;
ALTER TABLE tasks DROP COLUMN display_sort;
