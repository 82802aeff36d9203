-- Taskgraph schema, part 7: questions put to people (human in the loop),
-- asked about a task, a task list or a build agent's work, answered through
-- the API or a chat button, expired by the sweep.
--
-- Postgres dialect. db/migrations/sqlite/0007_questions.sql has the same
-- table, columns and constraint names.
--
-- task_agent_id names the task agent that asked, once task agents exist; it
-- has no foreign key yet.

-- +goose Up

CREATE TABLE questions (
    id                  UUID NOT NULL PRIMARY KEY,
    project_id          UUID NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_list_id        UUID REFERENCES task_lists (id) ON DELETE CASCADE,
    task_id             UUID REFERENCES tasks (id) ON DELETE CASCADE,
    run_id              UUID REFERENCES execution_runs (id) ON DELETE SET NULL,
    agent_id            UUID REFERENCES build_agents (id) ON DELETE SET NULL,
    task_agent_id       UUID,
    question_type       TEXT        NOT NULL,
    priority            TEXT        NOT NULL,
    question_text       TEXT        NOT NULL,
    options             JSONB       NOT NULL DEFAULT '[]',
    default_answer      TEXT,
    blocking            BOOLEAN     NOT NULL DEFAULT FALSE,
    -- Opaque, unique: the payload of a chat button (with the option index).
    callback_data       TEXT        NOT NULL,
    telegram_message_id TEXT,
    telegram_chat_id    TEXT,
    status              TEXT        NOT NULL,
    answer              TEXT,
    answered_at         TIMESTAMPTZ,
    answered_by         UUID REFERENCES users (id) ON DELETE SET NULL,
    answered_by_timeout BOOLEAN     NOT NULL DEFAULT FALSE,
    skip_reason         TEXT,
    timeout_action      TEXT        NOT NULL,
    expires_at          TIMESTAMPTZ,
    created_at          TIMESTAMPTZ NOT NULL,
    updated_at          TIMESTAMPTZ NOT NULL,
    CONSTRAINT questions_callback_data_key UNIQUE (callback_data),
    CONSTRAINT questions_callback_data_length_check CHECK (LENGTH(callback_data) BETWEEN 1 AND 64),
    CONSTRAINT questions_question_type_check
        CHECK (question_type IN ('VALIDATION', 'APPROVAL', 'DUPLICATE_MERGE', 'DECISION')),
    CONSTRAINT questions_priority_check CHECK (priority IN ('CRITICAL', 'HIGH', 'MEDIUM', 'LOW')),
    CONSTRAINT questions_status_check CHECK (status IN ('PENDING', 'ANSWERED', 'EXPIRED', 'SKIPPED')),
    CONSTRAINT questions_timeout_action_check CHECK (timeout_action IN ('EXPIRE', 'USE_DEFAULT', 'FAIL_TASK')),
    CONSTRAINT questions_answer_check CHECK (status <> 'ANSWERED' OR answer IS NOT NULL)
);

CREATE INDEX questions_project_id_created_at_idx ON questions (project_id, created_at);
CREATE INDEX questions_task_id_idx ON questions (task_id);
CREATE INDEX questions_task_list_id_idx ON questions (task_list_id);
CREATE INDEX questions_run_id_idx ON questions (run_id);
CREATE INDEX questions_agent_id_idx ON questions (agent_id);
-- The expiry sweep's scan: PENDING questions by expiry.
CREATE INDEX questions_status_expires_at_idx ON questions (status, expires_at);

-- The event log takes the two question kinds it did not know yet.
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check
    CHECK (type IN ('RUN_STARTED', 'RUN_PAUSED', 'RUN_RESUMED', 'RUN_COMPLETED', 'RUN_FAILED',
                        'RUN_CANCELLED', 'WAVE_STARTED', 'WAVE_COMPLETED', 'TASK_CREATED', 'TASK_UPDATED',
                        'TASK_STATUS_CHANGED', 'TASK_CLAIMED', 'AGENT_HEARTBEAT', 'AGENT_TERMINATED',
                        'LOG_APPENDED', 'TEST_RESULT_RECORDED', 'QUESTION_ASKED', 'QUESTION_ANSWERED',
                        'QUESTION_EXPIRED', 'QUESTION_SKIPPED'));

-- +goose Down

DELETE FROM events WHERE type IN ('QUESTION_EXPIRED', 'QUESTION_SKIPPED');
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check
    CHECK (type IN ('RUN_STARTED', 'RUN_PAUSED', 'RUN_RESUMED', 'RUN_COMPLETED', 'RUN_FAILED',
                        'RUN_CANCELLED', 'WAVE_STARTED', 'WAVE_COMPLETED', 'TASK_CREATED', 'TASK_UPDATED',
                        'TASK_STATUS_CHANGED', 'TASK_CLAIMED', 'AGENT_HEARTBEAT', 'AGENT_TERMINATED',
                        'LOG_APPENDED', 'TEST_RESULT_RECORDED', 'QUESTION_ASKED', 'QUESTION_ANSWERED'));

DROP TABLE questions;
