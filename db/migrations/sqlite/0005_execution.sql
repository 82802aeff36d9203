-- Taskgraph schema, part 5: execution runs and what happens in them — waves,
-- wave assignments, build agents and their heartbeats, task executions with
-- their log lines, test results, and the parallelism analysis of a plan.
--
-- SQLite dialect. db/migrations/postgres/0005_execution.sql has the same
-- tables, columns and constraint names (db/parity_test.go compares them).
--
-- SQLite has one writer at a time: claims need no row locks.
--
-- Times are written from the database clock where liveness depends on them
-- (agents' heartbeats), so that replicas with skewed clocks agree.

-- +goose Up

CREATE TABLE execution_runs (
    id                   TEXT        NOT NULL PRIMARY KEY,
    task_list_id         TEXT        NOT NULL REFERENCES task_lists (id) ON DELETE CASCADE,
    project_id           TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    run_number           INTEGER     NOT NULL,
    status               TEXT        NOT NULL,
    triggered_by         TEXT        NOT NULL,
    triggered_reason     TEXT,
    -- The run retried by this one (RETRY runs).
    retry_of_run_id      TEXT        REFERENCES execution_runs (id) ON DELETE SET NULL,
    max_parallel_agents  INTEGER     NOT NULL,
    tasks_total          INTEGER     NOT NULL DEFAULT 0,
    tasks_completed      INTEGER     NOT NULL DEFAULT 0,
    tasks_failed         INTEGER     NOT NULL DEFAULT 0,
    tasks_skipped        INTEGER     NOT NULL DEFAULT 0,
    tasks_blocked        INTEGER     NOT NULL DEFAULT 0,
    waves_total          INTEGER     NOT NULL DEFAULT 0,
    waves_completed      INTEGER     NOT NULL DEFAULT 0,
    current_wave         INTEGER,
    agents_spawned       INTEGER     NOT NULL DEFAULT 0,
    agents_active        INTEGER     NOT NULL DEFAULT 0,
    max_parallel_reached INTEGER     NOT NULL DEFAULT 0,
    started_at           TIMESTAMP  ,
    completed_at         TIMESTAMP  ,
    duration_ms          INTEGER,
    failure_reason       TEXT,
    last_error           TEXT,
    created_by           TEXT,
    created_at           TIMESTAMP   NOT NULL,
    updated_at           TIMESTAMP   NOT NULL,
    CONSTRAINT execution_runs_list_number_key UNIQUE (task_list_id, run_number),
    CONSTRAINT execution_runs_run_number_check CHECK (run_number >= 1),
    CONSTRAINT execution_runs_status_check
        CHECK (status IN ('PENDING', 'RUNNING', 'PAUSED', 'COMPLETED', 'FAILED', 'CANCELLED')),
    CONSTRAINT execution_runs_triggered_by_check CHECK (triggered_by IN ('USER', 'AUTO', 'RETRY', 'SCHEDULE')),
    CONSTRAINT execution_runs_counters_check
        CHECK (tasks_total >= 0 AND tasks_completed >= 0 AND tasks_failed >= 0 AND tasks_skipped >= 0
               AND tasks_blocked >= 0 AND waves_total >= 0 AND waves_completed >= 0 AND agents_spawned >= 0
               AND agents_active >= 0 AND max_parallel_reached >= 0)
);

-- At most one active run per list: a second startExecutionRun fails (CONFLICT).
CREATE UNIQUE INDEX execution_runs_one_active_idx ON execution_runs (task_list_id)
    WHERE status IN ('PENDING', 'RUNNING', 'PAUSED');
CREATE INDEX execution_runs_project_id_idx ON execution_runs (project_id);
CREATE INDEX execution_runs_retry_of_run_id_idx ON execution_runs (retry_of_run_id);

CREATE TABLE execution_waves (
    id               TEXT        NOT NULL PRIMARY KEY,
    run_id           TEXT        NOT NULL REFERENCES execution_runs (id) ON DELETE CASCADE,
    task_list_id     TEXT        NOT NULL REFERENCES task_lists (id) ON DELETE CASCADE,
    wave_number      INTEGER     NOT NULL,
    status           TEXT        NOT NULL,
    task_count       INTEGER     NOT NULL DEFAULT 0,
    completed_count  INTEGER     NOT NULL DEFAULT 0,
    failed_count     INTEGER     NOT NULL DEFAULT 0,
    skipped_count    INTEGER     NOT NULL DEFAULT 0,
    started_at       TIMESTAMP  ,
    completed_at     TIMESTAMP  ,
    duration_ms      INTEGER,
    created_at       TIMESTAMP   NOT NULL,
    CONSTRAINT execution_waves_run_number_key UNIQUE (run_id, wave_number),
    CONSTRAINT execution_waves_wave_number_check CHECK (wave_number >= 1),
    CONSTRAINT execution_waves_status_check
        CHECK (status IN ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'SKIPPED'))
);

CREATE INDEX execution_waves_task_list_id_idx ON execution_waves (task_list_id);

CREATE TABLE wave_task_assignments (
    id           TEXT        NOT NULL PRIMARY KEY,
    wave_id      TEXT        NOT NULL REFERENCES execution_waves (id) ON DELETE CASCADE,
    run_id       TEXT        NOT NULL REFERENCES execution_runs (id) ON DELETE CASCADE,
    task_id      TEXT        NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    position     INTEGER     NOT NULL,
    task_status  TEXT        NOT NULL,
    assigned_at  TIMESTAMP   NOT NULL,
    started_at   TIMESTAMP  ,
    completed_at TIMESTAMP  ,
    -- A task appears once per run.
    CONSTRAINT wave_task_assignments_run_task_key UNIQUE (run_id, task_id),
    CONSTRAINT wave_task_assignments_task_status_check
        CHECK (task_status IN ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'SKIPPED'))
);

CREATE INDEX wave_task_assignments_wave_id_idx ON wave_task_assignments (wave_id, position);
CREATE INDEX wave_task_assignments_task_id_idx ON wave_task_assignments (task_id);

-- One agent holds one task (1 agent = 1 task).
CREATE TABLE build_agents (
    id                            TEXT             NOT NULL PRIMARY KEY,
    run_id                        TEXT             NOT NULL REFERENCES execution_runs (id) ON DELETE CASCADE,
    wave_id                       TEXT             NOT NULL REFERENCES execution_waves (id) ON DELETE CASCADE,
    task_id                       TEXT             NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    task_list_id                  TEXT             NOT NULL REFERENCES task_lists (id) ON DELETE CASCADE,
    process_id                    TEXT,
    hostname                      TEXT,
    working_directory             TEXT,
    status                        TEXT             NOT NULL,
    last_heartbeat_at             TIMESTAMP        NOT NULL,
    heartbeat_count               INTEGER          NOT NULL DEFAULT 0,
    consecutive_missed_heartbeats INTEGER          NOT NULL DEFAULT 0,
    progress_percent              INTEGER          NOT NULL DEFAULT 0,
    current_step                  TEXT,
    memory_mb                     INTEGER,
    cpu_percent                   REAL,
    spawned_at                    TIMESTAMP        NOT NULL,
    terminated_at                 TIMESTAMP  ,
    termination_reason            TEXT,
    error_message                 TEXT,
    -- The principal whose token claimed the task.
    claimed_by                    TEXT,
    CONSTRAINT build_agents_status_check
        CHECK (status IN ('SPAWNING', 'IDLE', 'RUNNING', 'COMPLETING', 'TERMINATED')),
    CONSTRAINT build_agents_progress_percent_check CHECK (progress_percent BETWEEN 0 AND 100)
);

CREATE INDEX build_agents_run_id_idx ON build_agents (run_id);
CREATE INDEX build_agents_wave_id_idx ON build_agents (wave_id);
CREATE INDEX build_agents_task_id_idx ON build_agents (task_id);
CREATE INDEX build_agents_task_list_id_idx ON build_agents (task_list_id);
-- The heartbeat sweep's scan: live agents by last heartbeat.
CREATE INDEX build_agents_live_heartbeat_idx ON build_agents (last_heartbeat_at) WHERE status <> 'TERMINATED';

CREATE TABLE agent_heartbeats (
    id               TEXT             NOT NULL PRIMARY KEY,
    agent_id         TEXT             NOT NULL REFERENCES build_agents (id) ON DELETE CASCADE,
    run_id           TEXT             NOT NULL REFERENCES execution_runs (id) ON DELETE CASCADE,
    task_id          TEXT             NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    status           TEXT             NOT NULL,
    progress_percent INTEGER,
    current_step     TEXT,
    memory_mb        INTEGER,
    cpu_percent      REAL,
    recorded_at      TIMESTAMP        NOT NULL
);

CREATE INDEX agent_heartbeats_agent_id_idx ON agent_heartbeats (agent_id, recorded_at);
CREATE INDEX agent_heartbeats_run_id_idx ON agent_heartbeats (run_id);
CREATE INDEX agent_heartbeats_task_id_idx ON agent_heartbeats (task_id);

-- One attempt of one task by one agent (the design's task_execution_log).
CREATE TABLE task_executions (
    id             TEXT        NOT NULL PRIMARY KEY,
    task_id        TEXT        NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    task_list_id   TEXT        NOT NULL REFERENCES task_lists (id) ON DELETE CASCADE,
    run_id         TEXT        NOT NULL REFERENCES execution_runs (id) ON DELETE CASCADE,
    agent_id       TEXT        NOT NULL REFERENCES build_agents (id) ON DELETE CASCADE,
    wave_id        TEXT        NOT NULL REFERENCES execution_waves (id) ON DELETE CASCADE,
    attempt_number INTEGER     NOT NULL,
    status         TEXT        NOT NULL,
    started_at     TIMESTAMP   NOT NULL,
    ended_at       TIMESTAMP  ,
    duration_ms    INTEGER,
    last_error     TEXT,
    files_modified TEXT        NOT NULL DEFAULT '[]',
    git_commits    TEXT        NOT NULL DEFAULT '[]',
    -- The number of log lines (task_execution_log_lines.line_no runs 1 … log_lines).
    log_lines      INTEGER     NOT NULL DEFAULT 0,
    created_at     TIMESTAMP   NOT NULL,
    CONSTRAINT task_executions_run_task_attempt_key UNIQUE (run_id, task_id, attempt_number),
    CONSTRAINT task_executions_agent_id_key UNIQUE (agent_id),
    CONSTRAINT task_executions_attempt_number_check CHECK (attempt_number >= 1),
    CONSTRAINT task_executions_files_modified_json_check CHECK (json_valid(files_modified)),
    CONSTRAINT task_executions_git_commits_json_check CHECK (json_valid(git_commits)),
    CONSTRAINT task_executions_status_check
        CHECK (status IN ('RUNNING', 'COMPLETED', 'FAILED', 'INTERRUPTED', 'CANCELLED'))
);

CREATE INDEX task_executions_task_id_idx ON task_executions (task_id);
CREATE INDEX task_executions_task_list_id_idx ON task_executions (task_list_id);
CREATE INDEX task_executions_wave_id_idx ON task_executions (wave_id);

-- An execution's log, one row per line, so that the tail of a long log is read
-- by key range, never whole.
CREATE TABLE task_execution_log_lines (
    execution_id TEXT    NOT NULL REFERENCES task_executions (id) ON DELETE CASCADE,
    line_no      INTEGER NOT NULL,
    line         TEXT    NOT NULL,
    PRIMARY KEY (execution_id, line_no),
    CONSTRAINT task_execution_log_lines_line_no_check CHECK (line_no >= 1)
);

CREATE TABLE task_test_results (
    id           TEXT        NOT NULL PRIMARY KEY,
    task_id      TEXT        NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    task_list_id TEXT        NOT NULL REFERENCES task_lists (id) ON DELETE CASCADE,
    run_id       TEXT        NOT NULL REFERENCES execution_runs (id) ON DELETE CASCADE,
    execution_id TEXT        NOT NULL REFERENCES task_executions (id) ON DELETE CASCADE,
    agent_id     TEXT        NOT NULL REFERENCES build_agents (id) ON DELETE CASCADE,
    test_level   TEXT        NOT NULL,
    test_index   INTEGER     NOT NULL,
    test_name    TEXT,
    status       TEXT        NOT NULL,
    output       TEXT,
    error        TEXT,
    duration_ms  INTEGER,
    executed_by  TEXT,
    executed_at  TIMESTAMP   NOT NULL,
    CONSTRAINT task_test_results_test_level_check CHECK (test_level IN ('CODEBASE', 'API', 'UI')),
    CONSTRAINT task_test_results_test_index_check CHECK (test_index >= 0),
    CONSTRAINT task_test_results_status_check CHECK (status IN ('PASSED', 'FAILED', 'SKIPPED', 'ERROR'))
);

CREATE INDEX task_test_results_execution_id_idx ON task_test_results (execution_id, test_level, test_index);
CREATE INDEX task_test_results_task_id_idx ON task_test_results (task_id);
CREATE INDEX task_test_results_task_list_id_idx ON task_test_results (task_list_id);
CREATE INDEX task_test_results_run_id_idx ON task_test_results (run_id);
CREATE INDEX task_test_results_agent_id_idx ON task_test_results (agent_id);

-- Pairs of tasks that cannot share a wave, written when a plan is
-- materialised and invalidated when either task's file impacts or
-- relationships change. task_a_id < task_b_id.
CREATE TABLE parallelism_analysis (
    id               TEXT        NOT NULL PRIMARY KEY,
    task_list_id     TEXT        REFERENCES task_lists (id) ON DELETE CASCADE,
    task_a_id        TEXT        NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    task_b_id        TEXT        NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    can_parallel     BOOLEAN     NOT NULL,
    conflict_type    TEXT,
    conflict_details TEXT        NOT NULL DEFAULT '{}',
    analyzed_at      TIMESTAMP   NOT NULL,
    invalidated_at   TIMESTAMP  ,
    CONSTRAINT parallelism_analysis_pair_check CHECK (task_a_id < task_b_id),
    CONSTRAINT parallelism_analysis_can_parallel_bool_check CHECK (can_parallel IN (0, 1)),
    CONSTRAINT parallelism_analysis_conflict_details_json_check CHECK (json_valid(conflict_details)),
    CONSTRAINT parallelism_analysis_conflict_type_check
        CHECK (conflict_type IS NULL OR conflict_type IN ('DEPENDENCY', 'FILE_CONFLICT', 'RESOURCE_CONFLICT'))
);

CREATE INDEX parallelism_analysis_task_list_id_idx ON parallelism_analysis (task_list_id);
CREATE INDEX parallelism_analysis_task_a_id_idx ON parallelism_analysis (task_a_id);
CREATE INDEX parallelism_analysis_task_b_id_idx ON parallelism_analysis (task_b_id);

-- +goose Down

DROP TABLE parallelism_analysis;
DROP TABLE task_test_results;
DROP TABLE task_execution_log_lines;
DROP TABLE task_executions;
DROP TABLE agent_heartbeats;
DROP TABLE build_agents;
DROP TABLE wave_task_assignments;
DROP TABLE execution_waves;
DROP TABLE execution_runs;
