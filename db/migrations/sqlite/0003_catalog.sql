-- Taskgraph schema, part 3: the tool catalog and training data. Suites of
-- canonical actions, MCP servers and their tools, the maps that bind actions to
-- tools parameter by parameter, models, uploaded traces (trace_sessions, the
-- data model's "Session") and the examples built from them.
--
-- SQLite dialect. db/migrations/postgres/0003_catalog.sql has the same
-- tables, columns and constraint names (db/parity_test.go compares them).
-- Conventions as in 0001: ids and timestamps come from the application, enum
-- columns hold the GraphQL values under named CHECK constraints; ids TEXT,
-- timestamps TIMESTAMP, JSON TEXT checked with json_valid, BOOLEAN 0/1.
--
-- Deleting: what an entity owns goes with it (ON DELETE CASCADE: an action's
-- parameters, a map's mappings, …); what merely refers to it keeps it alive
-- (ON DELETE RESTRICT: a map refers to its suite, a mapping to its action and
-- tool, an example to its session, model and map). The service counts those
-- references first, to say in its CONFLICT error what still uses the entity.

-- +goose Up

CREATE TABLE suites (
    id         TEXT        NOT NULL PRIMARY KEY,
    name       TEXT        NOT NULL,
    created_at TIMESTAMP   NOT NULL,
    updated_at TIMESTAMP   NOT NULL,
    CONSTRAINT suites_name_key UNIQUE (name)
);

CREATE TABLE actions (
    id          TEXT        NOT NULL PRIMARY KEY,
    suite_id    TEXT        NOT NULL REFERENCES suites (id) ON DELETE CASCADE,
    name        TEXT        NOT NULL,
    description TEXT        NOT NULL DEFAULT '',
    created_at  TIMESTAMP   NOT NULL,
    updated_at  TIMESTAMP   NOT NULL,
    CONSTRAINT actions_suite_id_name_key UNIQUE (suite_id, name)
);

CREATE TABLE action_parameters (
    id          TEXT        NOT NULL PRIMARY KEY,
    action_id   TEXT        NOT NULL REFERENCES actions (id) ON DELETE CASCADE,
    name        TEXT        NOT NULL,
    type        TEXT        NOT NULL,
    required    BOOLEAN     NOT NULL DEFAULT 0,
    description TEXT        NOT NULL DEFAULT '',
    -- Order of the parameter in its action, from 0.
    position    INTEGER     NOT NULL,
    created_at  TIMESTAMP   NOT NULL,
    CONSTRAINT action_parameters_action_id_name_key UNIQUE (action_id, name),
    CONSTRAINT action_parameters_required_bool_check CHECK (required IN (0, 1)),
    CONSTRAINT action_parameters_type_check
        CHECK (type IN ('STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'OBJECT', 'ARRAY'))
);

CREATE TABLE mcp_servers (
    id         TEXT        NOT NULL PRIMARY KEY,
    name       TEXT        NOT NULL,
    created_at TIMESTAMP   NOT NULL,
    updated_at TIMESTAMP   NOT NULL,
    CONSTRAINT mcp_servers_name_key UNIQUE (name)
);

CREATE TABLE tools (
    id            TEXT        NOT NULL PRIMARY KEY,
    mcp_server_id TEXT        NOT NULL REFERENCES mcp_servers (id) ON DELETE CASCADE,
    name          TEXT        NOT NULL,
    description   TEXT        NOT NULL DEFAULT '',
    -- The tool's JSON Schema as imported from tools/list; NULL for tools
    -- created by hand.
    input_schema  TEXT,
    created_at    TIMESTAMP   NOT NULL,
    updated_at    TIMESTAMP   NOT NULL,
    CONSTRAINT tools_mcp_server_id_name_key UNIQUE (mcp_server_id, name),
    CONSTRAINT tools_input_schema_json_check CHECK (input_schema IS NULL OR json_valid(input_schema))
);

CREATE TABLE tool_parameters (
    id          TEXT        NOT NULL PRIMARY KEY,
    tool_id     TEXT        NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
    name        TEXT        NOT NULL,
    type        TEXT        NOT NULL,
    required    BOOLEAN     NOT NULL DEFAULT 0,
    description TEXT        NOT NULL DEFAULT '',
    position    INTEGER     NOT NULL,
    -- The property's own JSON Schema (nested objects and arrays keep their
    -- structure here); NULL for parameters created by hand.
    json_schema TEXT,
    created_at  TIMESTAMP   NOT NULL,
    CONSTRAINT tool_parameters_tool_id_name_key UNIQUE (tool_id, name),
    CONSTRAINT tool_parameters_required_bool_check CHECK (required IN (0, 1)),
    CONSTRAINT tool_parameters_json_schema_json_check CHECK (json_schema IS NULL OR json_valid(json_schema)),
    CONSTRAINT tool_parameters_type_check
        CHECK (type IN ('STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'OBJECT', 'ARRAY'))
);

CREATE TABLE action_tool_maps (
    id            TEXT        NOT NULL PRIMARY KEY,
    suite_id      TEXT        NOT NULL REFERENCES suites (id) ON DELETE RESTRICT,
    mcp_server_id TEXT        NOT NULL REFERENCES mcp_servers (id) ON DELETE RESTRICT,
    -- Raised by one on every change to the map's mappings.
    version       INTEGER     NOT NULL DEFAULT 1,
    created_at    TIMESTAMP   NOT NULL,
    updated_at    TIMESTAMP   NOT NULL,
    CONSTRAINT action_tool_maps_version_check CHECK (version >= 1)
);

CREATE INDEX action_tool_maps_suite_id_idx ON action_tool_maps (suite_id);
CREATE INDEX action_tool_maps_mcp_server_id_idx ON action_tool_maps (mcp_server_id);

CREATE TABLE action_tool_mappings (
    id                 TEXT        NOT NULL PRIMARY KEY,
    action_tool_map_id TEXT        NOT NULL REFERENCES action_tool_maps (id) ON DELETE CASCADE,
    action_id          TEXT        NOT NULL REFERENCES actions (id) ON DELETE RESTRICT,
    tool_id            TEXT        NOT NULL REFERENCES tools (id) ON DELETE RESTRICT,
    created_at         TIMESTAMP   NOT NULL,
    -- At most one mapping per action in a map.
    CONSTRAINT action_tool_mappings_map_id_action_id_key UNIQUE (action_tool_map_id, action_id)
);

CREATE INDEX action_tool_mappings_action_id_idx ON action_tool_mappings (action_id);
CREATE INDEX action_tool_mappings_tool_id_idx ON action_tool_mappings (tool_id);

CREATE TABLE action_tool_parameter_mappings (
    id                     TEXT        NOT NULL PRIMARY KEY,
    action_tool_mapping_id TEXT        NOT NULL REFERENCES action_tool_mappings (id) ON DELETE CASCADE,
    action_parameter_id    TEXT        NOT NULL REFERENCES action_parameters (id) ON DELETE RESTRICT,
    tool_parameter_id      TEXT        NOT NULL REFERENCES tool_parameters (id) ON DELETE RESTRICT,
    created_at             TIMESTAMP   NOT NULL,
    -- Each tool parameter is fed by at most one action parameter per mapping.
    CONSTRAINT action_tool_parameter_mappings_mapping_id_tool_parameter_id_key
        UNIQUE (action_tool_mapping_id, tool_parameter_id)
);

CREATE INDEX action_tool_parameter_mappings_action_parameter_id_idx
    ON action_tool_parameter_mappings (action_parameter_id);
CREATE INDEX action_tool_parameter_mappings_tool_parameter_id_idx
    ON action_tool_parameter_mappings (tool_parameter_id);

CREATE TABLE models (
    id         TEXT        NOT NULL PRIMARY KEY,
    provider   TEXT        NOT NULL,
    name       TEXT        NOT NULL,
    created_at TIMESTAMP   NOT NULL,
    CONSTRAINT models_provider_name_key UNIQUE (provider, name),
    CONSTRAINT models_provider_check
        CHECK (provider IN ('OPENAI', 'ANTHROPIC', 'GOOGLE', 'META', 'MISTRAL', 'OTHER'))
);

-- The data model's "Session": one uploaded trace of a user in a suite.
CREATE TABLE trace_sessions (
    id           TEXT        NOT NULL PRIMARY KEY,
    user_id      TEXT        NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
    suite_id     TEXT        NOT NULL REFERENCES suites (id) ON DELETE RESTRICT,
    description  TEXT        NOT NULL DEFAULT '',
    -- sessions/<id>/input_events.jsonl under the data directory, once uploaded.
    storage_path TEXT,
    size_bytes   INTEGER,
    event_count  INTEGER,
    uploaded_at  TIMESTAMP  ,
    created_at   TIMESTAMP   NOT NULL,
    CONSTRAINT trace_sessions_upload_check
        CHECK ((storage_path IS NULL) = (uploaded_at IS NULL))
);

CREATE INDEX trace_sessions_suite_id_created_at_idx ON trace_sessions (suite_id, created_at);
CREATE INDEX trace_sessions_user_id_idx ON trace_sessions (user_id);

CREATE TABLE examples (
    id                      TEXT        NOT NULL PRIMARY KEY,
    session_id              TEXT        NOT NULL REFERENCES trace_sessions (id) ON DELETE RESTRICT,
    model_id                TEXT        NOT NULL REFERENCES models (id) ON DELETE RESTRICT,
    action_tool_map_id      TEXT        NOT NULL REFERENCES action_tool_maps (id) ON DELETE RESTRICT,
    -- The map's version when the example was created.
    action_tool_map_version INTEGER     NOT NULL,
    model_configuration     TEXT        NOT NULL DEFAULT '{}',
    -- examples/<id>/messages.jsonl under the data directory, once completed.
    storage_path            TEXT,
    status                  TEXT        NOT NULL DEFAULT 'PENDING',
    failure_reason          TEXT,
    conversation_count      INTEGER,
    size_bytes              INTEGER,
    created_by              TEXT        REFERENCES users (id) ON DELETE SET NULL,
    -- The user whose token claimed the example for processing.
    claimed_by              TEXT        REFERENCES users (id) ON DELETE SET NULL,
    created_at              TIMESTAMP   NOT NULL,
    updated_at              TIMESTAMP   NOT NULL,
    claimed_at              TIMESTAMP  ,
    finished_at             TIMESTAMP  ,
    CONSTRAINT examples_model_configuration_json_check CHECK (json_valid(model_configuration)),
    CONSTRAINT examples_status_check CHECK (status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED')),
    CONSTRAINT examples_completed_check CHECK ((status = 'COMPLETED') = (storage_path IS NOT NULL)),
    CONSTRAINT examples_failed_check CHECK ((status = 'FAILED') = (failure_reason IS NOT NULL))
);

-- Claims take the oldest PENDING example first.
CREATE INDEX examples_status_created_at_idx ON examples (status, created_at);
CREATE INDEX examples_session_id_idx ON examples (session_id);
CREATE INDEX examples_model_id_idx ON examples (model_id);
CREATE INDEX examples_action_tool_map_id_idx ON examples (action_tool_map_id);
CREATE INDEX examples_created_by_idx ON examples (created_by);
CREATE INDEX examples_claimed_by_idx ON examples (claimed_by);

-- +goose Down

DROP TABLE examples;
DROP TABLE trace_sessions;
DROP TABLE models;
DROP TABLE action_tool_parameter_mappings;
DROP TABLE action_tool_mappings;
DROP TABLE action_tool_maps;
DROP TABLE tool_parameters;
DROP TABLE tools;
DROP TABLE mcp_servers;
DROP TABLE action_parameters;
DROP TABLE actions;
DROP TABLE suites;
