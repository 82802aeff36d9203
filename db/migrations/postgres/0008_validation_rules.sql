-- Taskgraph schema, part 8: validation rules — checks a task must pass before
-- it enters PENDING or an execution run starts (REQUIRED_FIELD, TEST_REQUIRED,
-- PATTERN_MATCH, CUSTOM CEL expressions).
--
-- PostgreSQL dialect. db/migrations/sqlite/0008_validation_rules.sql has the
-- same tables, columns and constraint names (db/parity_test.go compares them).
--
-- A rule with no project is global: it applies to every project's tasks.
-- category_filter is comma-separated task categories (empty: every category);
-- config is the type's JSON configuration, checked by the application when
-- the rule is written and kept as written (TEXT, not JSONB: its compiled form
-- is cached by its text). version rises by one on every update.

-- +goose Up

CREATE TABLE validation_rules (
    id              UUID        NOT NULL PRIMARY KEY,
    project_id      UUID        REFERENCES projects (id) ON DELETE CASCADE,
    name            TEXT        NOT NULL,
    description     TEXT        NOT NULL DEFAULT '',
    rule_type       TEXT        NOT NULL,
    category_filter TEXT        NOT NULL DEFAULT '',
    config          TEXT        NOT NULL,
    severity        TEXT        NOT NULL,
    enabled         BOOLEAN     NOT NULL DEFAULT true,
    version         INTEGER     NOT NULL DEFAULT 1,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    CONSTRAINT validation_rules_rule_type_check
        CHECK (rule_type IN ('REQUIRED_FIELD', 'TEST_REQUIRED', 'PATTERN_MATCH', 'CUSTOM')),
    CONSTRAINT validation_rules_severity_check CHECK (severity IN ('ERROR', 'WARNING'))
);

CREATE INDEX validation_rules_project_id_created_at_idx ON validation_rules (project_id, created_at);

-- +goose Down
DROP TABLE validation_rules;
