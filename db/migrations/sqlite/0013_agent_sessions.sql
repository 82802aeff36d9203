-- Agent sessions: where a ReAct agent's work lives between its steps — its
-- versioned state, its todo lists, every thought, action and observation —
-- and the lessons agents keep across sessions.
--
-- SQLite dialect. db/migrations/postgres/0009_agent_sessions.sql has the same
-- tables and columns (db/parity_test.go compares them) and explains the
-- locking; SQLite's single writer serializes the same changes.

-- +goose Up

CREATE TABLE agent_sessions (
    id            TEXT        NOT NULL PRIMARY KEY,
    project_id    TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id       TEXT        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    mission       TEXT        NOT NULL,
    status        TEXT        NOT NULL,
    profile       TEXT        NOT NULL,
    task_id       TEXT        REFERENCES tasks (id) ON DELETE SET NULL,
    agent_id      TEXT        REFERENCES build_agents (id) ON DELETE SET NULL,
    run_id        TEXT        REFERENCES execution_runs (id) ON DELETE SET NULL,
    state         TEXT        NOT NULL DEFAULT '{}',
    state_version INTEGER     NOT NULL,
    last_step_id  INTEGER     NOT NULL DEFAULT 0,
    created_at    TIMESTAMP   NOT NULL,
    updated_at    TIMESTAMP   NOT NULL,
    CONSTRAINT agent_sessions_status_check CHECK (status IN ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED')),
    CONSTRAINT agent_sessions_state_version_check CHECK (state_version > 0),
    CONSTRAINT agent_sessions_last_step_id_check CHECK (last_step_id >= 0),
    CONSTRAINT agent_sessions_state_json_check CHECK (json_valid(state))
);
CREATE INDEX agent_sessions_project_id_created_at_idx ON agent_sessions (project_id, created_at);
CREATE INDEX agent_sessions_agent_id_idx ON agent_sessions (agent_id) WHERE agent_id IS NOT NULL;
CREATE INDEX agent_sessions_task_id_idx ON agent_sessions (task_id) WHERE task_id IS NOT NULL;

CREATE TABLE agent_session_states (
    id         TEXT        NOT NULL PRIMARY KEY,
    session_id TEXT        NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    version    INTEGER     NOT NULL,
    state      TEXT        NOT NULL,
    created_at TIMESTAMP   NOT NULL,
    CONSTRAINT agent_session_states_session_id_version_key UNIQUE (session_id, version),
    CONSTRAINT agent_session_states_version_check CHECK (version > 0),
    CONSTRAINT agent_session_states_state_json_check CHECK (json_valid(state))
);

CREATE TABLE todo_lists (
    id         TEXT        NOT NULL PRIMARY KEY,
    session_id TEXT        NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    mission    TEXT        NOT NULL,
    status     TEXT        NOT NULL,
    version    INTEGER     NOT NULL,
    items      TEXT        NOT NULL,
    created_at TIMESTAMP   NOT NULL,
    updated_at TIMESTAMP   NOT NULL,
    CONSTRAINT todo_lists_status_check CHECK (status IN ('ACTIVE', 'COMPLETED', 'ABANDONED')),
    CONSTRAINT todo_lists_version_check CHECK (version > 0),
    CONSTRAINT todo_lists_items_json_check CHECK (json_valid(items))
);
CREATE INDEX todo_lists_session_id_created_at_idx ON todo_lists (session_id, created_at);
CREATE UNIQUE INDEX todo_lists_session_id_active_key ON todo_lists (session_id) WHERE status = 'ACTIVE';

CREATE TABLE react_steps (
    id          TEXT        NOT NULL PRIMARY KEY,
    session_id  TEXT        NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    step_id     INTEGER     NOT NULL,
    thought     TEXT,
    action      TEXT,
    action_type TEXT,
    action_data TEXT,
    observation TEXT,
    success     BOOLEAN,
    error       TEXT,
    recorded_at TIMESTAMP   NOT NULL,
    CONSTRAINT react_steps_session_id_step_id_key UNIQUE (session_id, step_id),
    CONSTRAINT react_steps_step_id_check CHECK (step_id > 0),
    CONSTRAINT react_steps_action_type_check CHECK (action_type IN ('TOOL_CALL', 'ASK_USER', 'COMPLETE', 'REPLAN'))
);

CREATE TABLE lessons (
    id          TEXT        NOT NULL PRIMARY KEY,
    project_id  TEXT        REFERENCES projects (id) ON DELETE CASCADE,
    session_id  TEXT        REFERENCES agent_sessions (id) ON DELETE SET NULL,
    context     TEXT        NOT NULL,
    what_failed TEXT,
    what_worked TEXT        NOT NULL,
    lesson      TEXT        NOT NULL,
    tool_name   TEXT,
    confidence  REAL        NOT NULL,
    dedupe_key  TEXT        NOT NULL,
    created_at  TIMESTAMP   NOT NULL,
    CONSTRAINT lessons_dedupe_key_key UNIQUE (dedupe_key),
    CONSTRAINT lessons_confidence_check CHECK (confidence >= 0 AND confidence <= 1)
);
CREATE INDEX lessons_project_id_confidence_idx ON lessons (project_id, confidence);

-- Full-text search over the lesson's texts (FTS5, Porter stemming). The index
-- keeps its own copy of the texts under the lesson's id, with the lesson's
-- project, confidence and time as unindexed columns, so that a search ranks
-- every match without reading lessons; the triggers keep it in step with
-- lessons inside the writing transaction (cascades included). A lesson's
-- project, confidence and time never change. Not an external-content table:
-- that would key on the implicit rowid, which VACUUM may renumber.
CREATE VIRTUAL TABLE lessons_fts USING fts5(
    id UNINDEXED, project_id UNINDEXED, confidence UNINDEXED, created_at UNINDEXED,
    context, lesson, what_worked, what_failed, tool_name,
    tokenize = 'porter unicode61'
);

-- +goose StatementBegin
CREATE TRIGGER lessons_fts_insert AFTER INSERT ON lessons BEGIN
    INSERT INTO lessons_fts (id, project_id, confidence, created_at, context, lesson, what_worked, what_failed, tool_name)
    VALUES (new.id, new.project_id, new.confidence, new.created_at, new.context, new.lesson, new.what_worked,
            COALESCE(new.what_failed, ''), new.tool_name);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER lessons_fts_delete AFTER DELETE ON lessons BEGIN
    DELETE FROM lessons_fts WHERE id = old.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER lessons_fts_update AFTER UPDATE OF project_id, confidence, created_at, context, lesson, what_worked,
    what_failed, tool_name ON lessons BEGIN
    DELETE FROM lessons_fts WHERE id = old.id;
    INSERT INTO lessons_fts (id, project_id, confidence, created_at, context, lesson, what_worked, what_failed, tool_name)
    VALUES (new.id, new.project_id, new.confidence, new.created_at, new.context, new.lesson, new.what_worked,
            COALESCE(new.what_failed, ''), new.tool_name);
END;
-- +goose StatementEnd

-- Events of a session: the session they are about, and the new kinds. SQLite
-- cannot change a CHECK constraint in place, so the table is rebuilt.
CREATE TABLE events_new (
    project_id  TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    seq         INTEGER     NOT NULL,
    run_id      TEXT,
    task_id     TEXT,
    agent_id    TEXT,
    type        TEXT        NOT NULL,
    payload     TEXT        NOT NULL DEFAULT '{}',
    occurred_at TIMESTAMP   NOT NULL,
    session_id  TEXT,
    PRIMARY KEY (project_id, seq),
    CONSTRAINT events_seq_check CHECK (seq > 0),
    CONSTRAINT events_type_check
        CHECK (type GLOB '[A-Z]*' AND type NOT GLOB '*[^A-Z_]*'),
    CONSTRAINT events_payload_json_check CHECK (json_valid(payload))
);
INSERT INTO events_new (project_id, seq, run_id, task_id, agent_id, type, payload, occurred_at)
    SELECT project_id, seq, run_id, task_id, agent_id, type, payload, occurred_at FROM events;
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE INDEX events_run_id_seq_idx ON events (run_id, seq) WHERE run_id IS NOT NULL;
CREATE INDEX events_session_id_seq_idx ON events (session_id, seq) WHERE session_id IS NOT NULL;

-- +goose Down

CREATE TABLE events_old (
    project_id  TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    seq         INTEGER     NOT NULL,
    run_id      TEXT,
    task_id     TEXT,
    agent_id    TEXT,
    type        TEXT        NOT NULL,
    payload     TEXT        NOT NULL DEFAULT '{}',
    occurred_at TIMESTAMP   NOT NULL,
    PRIMARY KEY (project_id, seq),
    CONSTRAINT events_seq_check CHECK (seq > 0),
    CONSTRAINT events_type_check
        CHECK (type GLOB '[A-Z]*' AND type NOT GLOB '*[^A-Z_]*'),
    CONSTRAINT events_payload_json_check CHECK (json_valid(payload))
);
INSERT INTO events_old (project_id, seq, run_id, task_id, agent_id, type, payload, occurred_at)
    SELECT project_id, seq, run_id, task_id, agent_id, type, payload, occurred_at FROM events
    WHERE type NOT IN ('SESSION_STATUS_CHANGED', 'SESSION_STATE_SAVED', 'TODO_LIST_CREATED',
                       'TODO_ITEM_CHANGED', 'REACT_STEP_RECORDED', 'LESSON_RECORDED');
DROP TABLE events;
ALTER TABLE events_old RENAME TO events;
CREATE INDEX events_run_id_seq_idx ON events (run_id, seq) WHERE run_id IS NOT NULL;
DROP TRIGGER lessons_fts_update;
DROP TRIGGER lessons_fts_delete;
DROP TRIGGER lessons_fts_insert;
DROP TABLE lessons_fts;
DROP TABLE lessons;
DROP TABLE react_steps;
DROP TABLE todo_lists;
DROP TABLE agent_session_states;
DROP TABLE agent_sessions;
