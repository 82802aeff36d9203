-- Taskgraph schema: what a build agent's life leaves behind.
--
-- * build_agents.end_reason: why a TERMINATED agent ended (TASK_COMPLETED,
--   TASK_FAILED, MISSED_HEARTBEATS, RUN_CANCELLED, QUESTION_TIMEOUT,
--   LEASE_LOST); NULL while it lives.
-- * build_agents.tasks_completed / tasks_failed: the agent's settled
--   outcomes (one agent holds one task: 0 or 1 each).
-- * build_agents.total_duration_ms: from its spawn to its end.
--
-- PostgreSQL dialect. db/migrations/sqlite/0020_agent_lifecycle.sql has the same
-- columns.

-- +goose Up

ALTER TABLE build_agents ADD COLUMN end_reason TEXT
    CHECK (end_reason IS NULL OR end_reason IN ('TASK_COMPLETED', 'TASK_FAILED', 'MISSED_HEARTBEATS',
        'RUN_CANCELLED', 'QUESTION_TIMEOUT', 'LEASE_LOST'));
ALTER TABLE build_agents ADD COLUMN tasks_completed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE build_agents ADD COLUMN tasks_failed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE build_agents ADD COLUMN total_duration_ms INTEGER;

-- +goose Down

ALTER TABLE build_agents DROP COLUMN total_duration_ms;
ALTER TABLE build_agents DROP COLUMN tasks_failed;
ALTER TABLE build_agents DROP COLUMN tasks_completed;
ALTER TABLE build_agents DROP COLUMN end_reason;
