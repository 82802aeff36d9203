-- Taskgraph schema, part 11: reasoning records — multi-pass reasoning
-- executions with their versioned task profiles, passes, each pass's
-- convergence assessment, semantic validation report (and its issues) and
-- refinements, and the execution's plan steps.
--
-- SQLite dialect. db/migrations/postgres/0011_reasoning.sql has the same
-- tables, columns and constraint names (db/parity_test.go compares them).
--
-- session_id names an agent session; it has no foreign key until sessions
-- have a table.

-- +goose Up

CREATE TABLE reasoning_executions (
    id                     TEXT             NOT NULL PRIMARY KEY,
    project_id             TEXT             NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    session_id             TEXT,
    task_id                TEXT             REFERENCES tasks (id) ON DELETE SET NULL,
    run_id                 TEXT             REFERENCES execution_runs (id) ON DELETE SET NULL,
    task_input             TEXT             NOT NULL,
    configuration          TEXT             NOT NULL,
    completeness_threshold REAL             NOT NULL,
    coherence_threshold    REAL             NOT NULL,
    ttl                    INTEGER          NOT NULL,
    status                 TEXT             NOT NULL,
    final_result           TEXT ,
    created_by             TEXT             NOT NULL,
    created_at             TIMESTAMP        NOT NULL,
    updated_at             TIMESTAMP        NOT NULL,
    completed_at           TIMESTAMP  ,
    CONSTRAINT reasoning_executions_status_check CHECK (status IN ('RUNNING', 'CONVERGED', 'TTL_EXPIRED', 'FAILED')),
    CONSTRAINT reasoning_executions_thresholds_check
        CHECK (completeness_threshold >= 0 AND completeness_threshold <= 1
               AND coherence_threshold >= 0 AND coherence_threshold <= 1),
    CONSTRAINT reasoning_executions_ttl_check CHECK (ttl >= 1)
);

CREATE INDEX reasoning_executions_project_id_idx ON reasoning_executions (project_id, created_at);
CREATE INDEX reasoning_executions_session_id_idx ON reasoning_executions (session_id);
CREATE INDEX reasoning_executions_task_id_idx ON reasoning_executions (task_id);
CREATE INDEX reasoning_executions_run_id_idx ON reasoning_executions (run_id);

CREATE TABLE reasoning_profiles (
    id                      TEXT             NOT NULL PRIMARY KEY,
    execution_id            TEXT             NOT NULL REFERENCES reasoning_executions (id) ON DELETE CASCADE,
    profile_version         INTEGER          NOT NULL,
    reasoning_depth         INTEGER          NOT NULL,
    information_sufficiency REAL             NOT NULL,
    expected_tool_usage     TEXT             NOT NULL,
    output_breadth          TEXT             NOT NULL,
    confidence_requirement  TEXT             NOT NULL,
    raw_inference           TEXT             NOT NULL,
    is_default              BOOLEAN          NOT NULL,
    created_at              TIMESTAMP        NOT NULL,
    CONSTRAINT reasoning_profiles_version_key UNIQUE (execution_id, profile_version),
    CONSTRAINT reasoning_profiles_version_check CHECK (profile_version >= 1),
    CONSTRAINT reasoning_profiles_depth_check CHECK (reasoning_depth BETWEEN 1 AND 5),
    CONSTRAINT reasoning_profiles_sufficiency_check CHECK (information_sufficiency >= 0 AND information_sufficiency <= 1),
    CONSTRAINT reasoning_profiles_tool_usage_check CHECK (expected_tool_usage IN ('NONE', 'MINIMAL', 'MODERATE', 'EXTENSIVE')),
    CONSTRAINT reasoning_profiles_breadth_check CHECK (output_breadth IN ('NARROW', 'MODERATE', 'BROAD')),
    CONSTRAINT reasoning_profiles_confidence_check CHECK (confidence_requirement IN ('LOW', 'MEDIUM', 'HIGH'))
);

CREATE TABLE reasoning_passes (
    id                 TEXT        NOT NULL PRIMARY KEY,
    execution_id       TEXT        NOT NULL REFERENCES reasoning_executions (id) ON DELETE CASCADE,
    pass_number        INTEGER     NOT NULL,
    phase              TEXT        NOT NULL,
    profile_id         TEXT        NOT NULL REFERENCES reasoning_profiles (id),
    plan_state         TEXT        NOT NULL,
    execution_results  TEXT        NOT NULL,
    evaluation_results TEXT        NOT NULL,
    refinement_changes TEXT        NOT NULL,
    ttl_remaining      INTEGER     NOT NULL,
    started_at         TIMESTAMP   NOT NULL,
    ended_at           TIMESTAMP  ,
    duration_ms        INTEGER,
    CONSTRAINT reasoning_passes_number_key UNIQUE (execution_id, pass_number),
    CONSTRAINT reasoning_passes_number_check CHECK (pass_number >= 0),
    CONSTRAINT reasoning_passes_phase_check CHECK (phase IN ('A', 'B', 'C', 'D')),
    CONSTRAINT reasoning_passes_ttl_check CHECK (ttl_remaining >= 0)
);

-- One open pass per execution.
CREATE UNIQUE INDEX reasoning_passes_one_open_idx ON reasoning_passes (execution_id) WHERE ended_at IS NULL;
CREATE INDEX reasoning_passes_profile_id_idx ON reasoning_passes (profile_id);

CREATE TABLE reasoning_assessments (
    pass_id            TEXT             NOT NULL PRIMARY KEY REFERENCES reasoning_passes (id) ON DELETE CASCADE,
    execution_id       TEXT             NOT NULL REFERENCES reasoning_executions (id) ON DELETE CASCADE,
    converged          BOOLEAN          NOT NULL,
    reason_codes       TEXT             NOT NULL,
    completeness_score REAL             NOT NULL,
    coherence_score    REAL             NOT NULL,
    consistency_status TEXT             NOT NULL,
    detected_issues    TEXT             NOT NULL,
    metadata           TEXT             NOT NULL,
    created_at         TIMESTAMP        NOT NULL,
    CONSTRAINT reasoning_assessments_scores_check
        CHECK (completeness_score >= 0 AND completeness_score <= 1 AND coherence_score >= 0 AND coherence_score <= 1)
);

CREATE INDEX reasoning_assessments_execution_id_idx ON reasoning_assessments (execution_id);

CREATE TABLE reasoning_validation_reports (
    id               TEXT        NOT NULL PRIMARY KEY,
    pass_id          TEXT        NOT NULL REFERENCES reasoning_passes (id) ON DELETE CASCADE,
    execution_id     TEXT        NOT NULL REFERENCES reasoning_executions (id) ON DELETE CASCADE,
    validation_id    TEXT        NOT NULL,
    artifact_type    TEXT        NOT NULL,
    overall_severity TEXT        NOT NULL,
    issue_summary    TEXT        NOT NULL,
    proposed_repairs TEXT        NOT NULL,
    created_at       TIMESTAMP   NOT NULL,
    CONSTRAINT reasoning_validation_reports_pass_key UNIQUE (pass_id),
    CONSTRAINT reasoning_validation_reports_artifact_check
        CHECK (artifact_type IN ('PLAN', 'STEP', 'EXECUTION_ARTIFACT', 'CROSS_PHASE')),
    CONSTRAINT reasoning_validation_reports_severity_check
        CHECK (overall_severity IN ('LOW', 'MEDIUM', 'HIGH', 'CRITICAL'))
);

CREATE INDEX reasoning_validation_reports_execution_id_idx ON reasoning_validation_reports (execution_id);

CREATE TABLE reasoning_validation_issues (
    report_id       TEXT    NOT NULL REFERENCES reasoning_validation_reports (id) ON DELETE CASCADE,
    position        INTEGER NOT NULL,
    issue_id        TEXT    NOT NULL,
    type            TEXT    NOT NULL,
    severity        TEXT    NOT NULL,
    description     TEXT    NOT NULL,
    location        TEXT ,
    proposed_repair TEXT ,
    CONSTRAINT reasoning_validation_issues_pkey PRIMARY KEY (report_id, position),
    CONSTRAINT reasoning_validation_issues_issue_key UNIQUE (report_id, issue_id),
    CONSTRAINT reasoning_validation_issues_type_check
        CHECK (type IN ('SPECIFICITY', 'RELEVANCE', 'CONSISTENCY', 'HALLUCINATION', 'DO_SAY_MISMATCH')),
    CONSTRAINT reasoning_validation_issues_severity_check CHECK (severity IN ('LOW', 'MEDIUM', 'HIGH', 'CRITICAL'))
);

CREATE TABLE reasoning_refinements (
    id                        TEXT        NOT NULL PRIMARY KEY,
    pass_id                   TEXT        NOT NULL REFERENCES reasoning_passes (id) ON DELETE CASCADE,
    execution_id              TEXT        NOT NULL REFERENCES reasoning_executions (id) ON DELETE CASCADE,
    action_type               TEXT        NOT NULL,
    target_step_id            TEXT,
    target_plan_section       TEXT,
    new_step                  TEXT ,
    changes                   TEXT        NOT NULL,
    reason                    TEXT        NOT NULL,
    semantic_validation_input TEXT        NOT NULL,
    inconsistency_detected    BOOLEAN     NOT NULL,
    created_at                TIMESTAMP   NOT NULL,
    CONSTRAINT reasoning_refinements_action_check CHECK (action_type IN ('ADD', 'MODIFY', 'REMOVE', 'REPLACE')),
    CONSTRAINT reasoning_refinements_target_check CHECK ((target_step_id IS NULL) <> (target_plan_section IS NULL))
);

CREATE INDEX reasoning_refinements_pass_id_idx ON reasoning_refinements (pass_id, created_at);
CREATE INDEX reasoning_refinements_execution_id_idx ON reasoning_refinements (execution_id);

CREATE TABLE reasoning_steps (
    id               TEXT        NOT NULL PRIMARY KEY,
    execution_id     TEXT        NOT NULL REFERENCES reasoning_executions (id) ON DELETE CASCADE,
    step_id          TEXT        NOT NULL,
    step_index       INTEGER     NOT NULL,
    total_steps      INTEGER     NOT NULL,
    incoming_context TEXT,
    handoff_to_next  TEXT,
    description      TEXT        NOT NULL,
    dependencies     TEXT        NOT NULL,
    provides         TEXT        NOT NULL,
    status           TEXT        NOT NULL,
    step_output      TEXT,
    clarity_state    TEXT,
    created_at       TIMESTAMP   NOT NULL,
    updated_at       TIMESTAMP   NOT NULL,
    CONSTRAINT reasoning_steps_step_key UNIQUE (execution_id, step_id),
    CONSTRAINT reasoning_steps_index_check CHECK (step_index >= 1 AND total_steps >= step_index),
    CONSTRAINT reasoning_steps_status_check CHECK (status IN ('PENDING', 'RUNNING', 'COMPLETE', 'FAILED', 'INVALID')),
    CONSTRAINT reasoning_steps_clarity_check
        CHECK (clarity_state IS NULL OR clarity_state IN ('CLEAR', 'PARTIALLY_CLEAR', 'BLOCKED'))
);

CREATE INDEX reasoning_steps_execution_id_idx ON reasoning_steps (execution_id, step_index);

-- The event log accepts the reasoning kinds. Its type check becomes a check of
-- the form of a kind (upper-case letters and underscores) instead of a list:
-- the domain owns the list (an unknown kind is never written, and one read
-- back is skipped), and domains that add kinds in migrations of their own no
-- longer overwrite each other's lists, whatever order those migrations run in.
-- SQLite cannot change a CHECK constraint: the table is rebuilt as it was,
-- with the new check (nothing references it).
CREATE TABLE events_rebuilt (
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
INSERT INTO events_rebuilt (project_id, seq, run_id, task_id, agent_id, type, payload, occurred_at)
    SELECT project_id, seq, run_id, task_id, agent_id, type, payload, occurred_at FROM events;
DROP TABLE events;
ALTER TABLE events_rebuilt RENAME TO events;
CREATE INDEX events_run_id_seq_idx ON events (run_id, seq) WHERE run_id IS NOT NULL;

-- +goose Down

DELETE FROM events WHERE type IN ('REASONING_STARTED', 'PASS_STARTED', 'PASS_COMPLETED', 'CONVERGENCE_ASSESSED', 'REASONING_FINISHED');
CREATE TABLE events_rebuilt (
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
        CHECK (type IN ('RUN_STARTED', 'RUN_PAUSED', 'RUN_RESUMED', 'RUN_COMPLETED', 'RUN_FAILED',
                        'RUN_CANCELLED', 'WAVE_STARTED', 'WAVE_COMPLETED', 'TASK_CREATED', 'TASK_UPDATED',
                        'TASK_STATUS_CHANGED', 'TASK_CLAIMED', 'AGENT_HEARTBEAT', 'AGENT_TERMINATED',
                        'LOG_APPENDED', 'TEST_RESULT_RECORDED', 'QUESTION_ASKED', 'QUESTION_ANSWERED')),
    CONSTRAINT events_payload_json_check CHECK (json_valid(payload))
);
INSERT INTO events_rebuilt (project_id, seq, run_id, task_id, agent_id, type, payload, occurred_at)
    SELECT project_id, seq, run_id, task_id, agent_id, type, payload, occurred_at FROM events;
DROP TABLE events;
ALTER TABLE events_rebuilt RENAME TO events;
CREATE INDEX events_run_id_seq_idx ON events (run_id, seq) WHERE run_id IS NOT NULL;

DROP TABLE reasoning_steps;
DROP TABLE reasoning_refinements;
DROP TABLE reasoning_validation_issues;
DROP TABLE reasoning_validation_reports;
DROP TABLE reasoning_assessments;
DROP TABLE reasoning_passes;
DROP TABLE reasoning_profiles;
DROP TABLE reasoning_executions;
