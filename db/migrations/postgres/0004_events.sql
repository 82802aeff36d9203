-- Taskgraph schema, part 2: the event log behind subscriptions and
-- Project.events.
--
-- PostgreSQL dialect. db/migrations/sqlite/0002_events.sql has the same
-- tables, columns and constraint names (db/parity_test.go compares them).
--
-- Every change worth watching writes one events row in the same transaction
-- as the change. seq numbers a project's events 1, 2, 3, … with no gaps, in
-- commit order: a transaction takes its numbers from the project's
-- event_sequences row (UPDATE … RETURNING), whose row lock it holds until it
-- commits, so no later transaction can commit a smaller number of the same
-- project, and a reader that has seen seq n has seen every event before it.
-- Cursors are (project, seq).

-- +goose Up

-- The last seq handed out per project.
CREATE TABLE event_sequences (
    project_id UUID   NOT NULL PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    last_seq   BIGINT NOT NULL,
    CONSTRAINT event_sequences_last_seq_check CHECK (last_seq > 0)
);

CREATE TABLE events (
    project_id  UUID        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    seq         BIGINT      NOT NULL,
    -- The run, task and agent an event is about. Not foreign keys: the log
    -- outlives what it describes, and runs and agents come with the execution
    -- tables.
    run_id      UUID,
    task_id     UUID,
    agent_id    UUID,
    type        TEXT        NOT NULL,
    -- The details of the event's type (ids only of other rows, never secrets).
    payload     JSONB       NOT NULL DEFAULT '{}',
    occurred_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (project_id, seq),
    CONSTRAINT events_seq_check CHECK (seq > 0),
    CONSTRAINT events_type_check
        CHECK (type IN ('RUN_STARTED', 'RUN_PAUSED', 'RUN_RESUMED', 'RUN_COMPLETED', 'RUN_FAILED',
                        'RUN_CANCELLED', 'WAVE_STARTED', 'WAVE_COMPLETED', 'TASK_CREATED', 'TASK_UPDATED',
                        'TASK_STATUS_CHANGED', 'TASK_CLAIMED', 'AGENT_HEARTBEAT', 'AGENT_TERMINATED',
                        'LOG_APPENDED', 'TEST_RESULT_RECORDED', 'QUESTION_ASKED', 'QUESTION_ANSWERED'))
);

-- A run's events, in project order (runEvents, ExecutionRun.events).
CREATE INDEX events_run_id_seq_idx ON events (run_id, seq) WHERE run_id IS NOT NULL;

-- +goose Down

DROP TABLE events;
DROP TABLE event_sequences;
