-- Taskgraph schema, part 20: task lists run on a schedule.
--
-- * task_lists.run_schedule: a 5-field cron expression (UTC) after which the
--   list gets a SCHEDULE run; NULL: none.
-- * task_lists.next_scheduled_run_at: the next tick of run_schedule. The
--   schedule sweep claims a due tick by moving it forward with a conditional
--   UPDATE in the transaction that inserts the run, so one replica starts it.
--
-- SQLite dialect. db/migrations/postgres/0020_list_lifecycle.sql has the same
-- columns and index names.

-- +goose Up

ALTER TABLE task_lists ADD COLUMN run_schedule TEXT;
ALTER TABLE task_lists ADD COLUMN next_scheduled_run_at TIMESTAMP;
CREATE INDEX task_lists_next_scheduled_run_at_idx ON task_lists (next_scheduled_run_at)
    WHERE next_scheduled_run_at IS NOT NULL;

-- +goose Down

DROP INDEX task_lists_next_scheduled_run_at_idx;
ALTER TABLE task_lists DROP COLUMN next_scheduled_run_at;
ALTER TABLE task_lists DROP COLUMN run_schedule;
