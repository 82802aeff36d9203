-- Taskgraph schema: a task's text signature (domain.TextSignature of its
-- title and description: its 64 most frequent words with their counts),
-- written by the store with the task, so that grouping compares a few hundred
-- bytes per task instead of tokenising every description on every
-- clustering. Rows written before it have none (NULL): grouping reads a
-- bounded prefix of their text instead, until they are next written.
--
-- PostgreSQL dialect. db/migrations/sqlite/0017_task_text_signature.sql has
-- the same column.
-- +goose Up

ALTER TABLE tasks ADD COLUMN text_signature TEXT;

-- +goose Down

ALTER TABLE tasks DROP COLUMN text_signature;
