-- Agent sessions: where a ReAct agent's work lives between its steps — its
-- versioned state, its todo lists, every thought, action and observation —
-- and the lessons agents keep across sessions.
--
-- PostgreSQL dialect. db/migrations/sqlite/0009_agent_sessions.sql has the
-- same tables and columns (db/parity_test.go compares them).
--
-- Concurrency: a session's row is the lock its changes take. A state save is
-- a compare-and-swap on state_version; a ReAct step takes its number from
-- last_step_id (UPDATE … RETURNING), holding the row until it commits, so
-- step numbers are 1..N per session with no gap, in commit order. Neither
-- checks the other's counter, so steps never conflict with state saves.

-- +goose Up

CREATE TABLE agent_sessions (
    id            UUID        NOT NULL PRIMARY KEY,
    project_id    UUID        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id       UUID        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    mission       TEXT        NOT NULL,
    status        TEXT        NOT NULL,
    profile       TEXT        NOT NULL,
    -- A session opened for a build agent belongs to its task and run; its
    -- events are on that run's stream.
    task_id       UUID        REFERENCES tasks (id) ON DELETE SET NULL,
    agent_id      UUID        REFERENCES build_agents (id) ON DELETE SET NULL,
    run_id        UUID        REFERENCES execution_runs (id) ON DELETE SET NULL,
    -- The latest state (also the newest row of agent_session_states).
    state         JSONB       NOT NULL DEFAULT '{}',
    state_version INTEGER     NOT NULL,
    -- The number of the session's last ReAct step (0: none yet).
    last_step_id  INTEGER     NOT NULL DEFAULT 0,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    CONSTRAINT agent_sessions_status_check CHECK (status IN ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED')),
    CONSTRAINT agent_sessions_state_version_check CHECK (state_version > 0),
    CONSTRAINT agent_sessions_last_step_id_check CHECK (last_step_id >= 0)
);
CREATE INDEX agent_sessions_project_id_created_at_idx ON agent_sessions (project_id, created_at);
CREATE INDEX agent_sessions_agent_id_idx ON agent_sessions (agent_id) WHERE agent_id IS NOT NULL;
CREATE INDEX agent_sessions_task_id_idx ON agent_sessions (task_id) WHERE task_id IS NOT NULL;

-- Every saved state, newest kept until pruned.
CREATE TABLE agent_session_states (
    id         UUID        NOT NULL PRIMARY KEY,
    session_id UUID        NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    version    INTEGER     NOT NULL,
    state      JSONB       NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    CONSTRAINT agent_session_states_session_id_version_key UNIQUE (session_id, version),
    CONSTRAINT agent_session_states_version_check CHECK (version > 0)
);

-- A session's plans; items are one JSON array (positions 0..n-1).
CREATE TABLE todo_lists (
    id         UUID        NOT NULL PRIMARY KEY,
    session_id UUID        NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    mission    TEXT        NOT NULL,
    status     TEXT        NOT NULL,
    version    INTEGER     NOT NULL,
    items      JSONB       NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    CONSTRAINT todo_lists_status_check CHECK (status IN ('ACTIVE', 'COMPLETED', 'ABANDONED')),
    CONSTRAINT todo_lists_version_check CHECK (version > 0)
);
CREATE INDEX todo_lists_session_id_created_at_idx ON todo_lists (session_id, created_at);
-- At most one ACTIVE list per session.
CREATE UNIQUE INDEX todo_lists_session_id_active_key ON todo_lists (session_id) WHERE status = 'ACTIVE';

-- The ReAct loop's steps, append-only.
CREATE TABLE react_steps (
    id          UUID             NOT NULL PRIMARY KEY,
    session_id  UUID             NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    step_id     INTEGER          NOT NULL,
    thought     TEXT,
    action      TEXT,
    action_type TEXT,
    action_data JSONB,
    observation JSONB,
    success     BOOLEAN,
    error       TEXT,
    recorded_at TIMESTAMPTZ      NOT NULL,
    CONSTRAINT react_steps_session_id_step_id_key UNIQUE (session_id, step_id),
    CONSTRAINT react_steps_step_id_check CHECK (step_id > 0),
    CONSTRAINT react_steps_action_type_check CHECK (action_type IN ('TOOL_CALL', 'ASK_USER', 'COMPLETE', 'REPLAN'))
);

-- Lessons learnt; project_id NULL: a global lesson, seen by everyone.
CREATE TABLE lessons (
    id          UUID             NOT NULL PRIMARY KEY,
    project_id  UUID             REFERENCES projects (id) ON DELETE CASCADE,
    session_id  UUID             REFERENCES agent_sessions (id) ON DELETE SET NULL,
    context     TEXT             NOT NULL,
    what_failed TEXT,
    what_worked TEXT             NOT NULL,
    lesson      TEXT             NOT NULL,
    tool_name   TEXT,
    confidence  DOUBLE PRECISION NOT NULL,
    -- The hash of the lesson's scope and texts: the same lesson is stored once.
    dedupe_key  TEXT             NOT NULL,
    created_at  TIMESTAMPTZ      NOT NULL,
    -- The searched document, kept by the database (SQLite's counterpart is
    -- the FTS5 table lessons_fts); stored, so ranking reads it instead of
    -- parsing every matching lesson again.
    search_vector TSVECTOR GENERATED ALWAYS AS (to_tsvector('english',
        context || ' ' || lesson || ' ' || what_worked || ' ' || COALESCE(what_failed, '') || ' ' || COALESCE(tool_name, ''))) STORED,
    CONSTRAINT lessons_dedupe_key_key UNIQUE (dedupe_key),
    CONSTRAINT lessons_confidence_check CHECK (confidence >= 0 AND confidence <= 1)
);
CREATE INDEX lessons_project_id_confidence_idx ON lessons (project_id, confidence);
-- Full-text search over the lesson's texts.
CREATE INDEX lessons_search_idx ON lessons USING GIN (search_vector);

-- Events of a session: the session they are about, and the new kinds.
ALTER TABLE events ADD COLUMN session_id UUID;
CREATE INDEX events_session_id_seq_idx ON events (session_id, seq) WHERE session_id IS NOT NULL;
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check
    CHECK (type ~ '^[A-Z][A-Z_]*$');

-- +goose Down

DELETE FROM events WHERE type IN ('SESSION_STATUS_CHANGED', 'SESSION_STATE_SAVED', 'TODO_LIST_CREATED',
    'TODO_ITEM_CHANGED', 'REACT_STEP_RECORDED', 'LESSON_RECORDED');
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check
    CHECK (type ~ '^[A-Z][A-Z_]*$');
DROP INDEX events_session_id_seq_idx;
ALTER TABLE events DROP COLUMN session_id;
DROP TABLE lessons;
DROP TABLE react_steps;
DROP TABLE todo_lists;
DROP TABLE agent_session_states;
DROP TABLE agent_sessions;
