-- Taskgraph schema, part 2: the event log behind subscriptions and
-- Project.events.
--
-- SQLite dialect. db/migrations/postgres/0002_events.sql has the same tables,
-- columns and constraint names (db/parity_test.go compares them), and explains
-- the sequence. SQLite has one writer at a time, so numbers taken from
-- event_sequences inside a transaction commit in order by construction.

-- +goose Up

-- The last seq handed out per project.
CREATE TABLE event_sequences (
    project_id TEXT    NOT NULL PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    last_seq   INTEGER NOT NULL,
    CONSTRAINT event_sequences_last_seq_check CHECK (last_seq > 0)
);

CREATE TABLE events (
    project_id  TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    seq         INTEGER     NOT NULL,
    -- The run, task and agent an event is about. Not foreign keys: the log
    -- outlives what it describes, and runs and agents come with the execution
    -- tables.
    run_id      TEXT,
    task_id     TEXT,
    agent_id    TEXT,
    type        TEXT        NOT NULL,
    -- The details of the event's type (ids only of other rows, never secrets).
    payload     TEXT        NOT NULL DEFAULT '{}',
    occurred_at TIMESTAMP   NOT NULL,
    PRIMARY KEY (project_id, seq),
    CONSTRAINT events_seq_check CHECK (seq > 0),
    CONSTRAINT events_type_check
        CHECK (type IN ('RUN_STARTED', 'RUN_PAUSED', 'RUN_RESUMED', 'RUN_COMPLETED', 'RUN_FAILED',
                        'RUN_CANCELLED', 'WAVE_STARTED', 'WAVE_COMPLETED', 'TASK_CREATED', 'TASK_UPDATED',
                        'TASK_STATUS_CHANGED', 'TASK_CLAIMED', 'AGENT_HEARTBEAT', 'AGENT_TERMINATED',
                        'LOG_APPENDED', 'TEST_RESULT_RECORDED', 'QUESTION_ASKED', 'QUESTION_ANSWERED')),
    CONSTRAINT events_payload_json_check CHECK (json_valid(payload))
);

-- A run's events, in project order (runEvents, ExecutionRun.events).
CREATE INDEX events_run_id_seq_idx ON events (run_id, seq) WHERE run_id IS NOT NULL;

-- +goose Down

DROP TABLE events;
DROP TABLE event_sequences;
