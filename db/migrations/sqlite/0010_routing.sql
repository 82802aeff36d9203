-- Taskgraph schema, part 10: routing — routers and their messages, the
-- planners a router starts (linked to the router, and to the message they
-- answer), the workers a planner runs, the messages of planners and workers —
-- and the function queue that runs planner and worker functions in the
-- background.
--
-- SQLite dialect. db/migrations/postgres/0010_routing.sql has the same tables,
-- columns and constraint names (db/parity_test.go compares them).
--
-- Queue times that decide liveness (scheduled_at, lease_expires_at) are
-- written from the database clock, so that replicas agree.

-- +goose Up

CREATE TABLE routers (
    id             TEXT        NOT NULL PRIMARY KEY,
    project_id     TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    status         TEXT        NOT NULL,
    model          TEXT        NOT NULL,
    temperature    REAL     NOT NULL,
    title          TEXT,
    preview        TEXT,
    agent_metadata TEXT       NOT NULL DEFAULT '{}',
    schema_version INTEGER     NOT NULL DEFAULT 2,
    created_at     TIMESTAMP        NOT NULL,
    updated_at     TIMESTAMP        NOT NULL,
    CONSTRAINT routers_status_check CHECK (status IN ('ACTIVE', 'PROCESSING', 'COMPLETED', 'FAILED', 'ARCHIVED')),
    CONSTRAINT routers_agent_metadata_json_check CHECK (json_valid(agent_metadata))
);
CREATE INDEX routers_project_id_idx ON routers (project_id, created_at);

CREATE TABLE router_messages (
    id         TEXT        NOT NULL PRIMARY KEY,
    router_id  TEXT        NOT NULL REFERENCES routers (id) ON DELETE CASCADE,
    project_id TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    role       TEXT        NOT NULL,
    content    TEXT        NOT NULL,
    created_at TIMESTAMP        NOT NULL,
    CONSTRAINT router_messages_role_check CHECK (role IN ('USER', 'ASSISTANT'))
);
CREATE INDEX router_messages_router_id_idx ON router_messages (router_id, created_at);

CREATE TABLE planners (
    id                  TEXT        NOT NULL PRIMARY KEY,
    project_id          TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    planner_name        TEXT,
    user_question       TEXT        NOT NULL,
    instruction         TEXT,
    execution_plan      TEXT,
    model               TEXT        NOT NULL,
    temperature         REAL     NOT NULL,
    failed_task_limit   INTEGER     NOT NULL,
    -- Workers of this planner that reached FAILED_VALIDATION, retries included.
    failed_task_count   INTEGER     NOT NULL DEFAULT 0,
    status              TEXT        NOT NULL,
    user_response       TEXT,
    next_task           TEXT,
    variable_file_paths TEXT       NOT NULL DEFAULT '{}',
    image_file_paths    TEXT       NOT NULL DEFAULT '{}',
    agent_metadata      TEXT       NOT NULL DEFAULT '{}',
    schema_version      INTEGER     NOT NULL DEFAULT 2,
    created_at          TIMESTAMP        NOT NULL,
    updated_at          TIMESTAMP        NOT NULL,
    CONSTRAINT planners_status_check CHECK (status IN ('PLANNING', 'EXECUTING', 'COMPLETED', 'FAILED')),
    CONSTRAINT planners_failed_task_limit_check CHECK (failed_task_limit >= 1),
    CONSTRAINT planners_variable_file_paths_json_check CHECK (json_valid(variable_file_paths)),
    CONSTRAINT planners_image_file_paths_json_check CHECK (json_valid(image_file_paths)),
    CONSTRAINT planners_agent_metadata_json_check CHECK (json_valid(agent_metadata))
);
CREATE INDEX planners_project_id_idx ON planners (project_id);

CREATE TABLE workers (
    id                        TEXT        NOT NULL PRIMARY KEY,
    planner_id                TEXT        NOT NULL REFERENCES planners (id) ON DELETE CASCADE,
    project_id                TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    worker_name               TEXT,
    task_status               TEXT        NOT NULL,
    next_task                 TEXT,
    task_description          TEXT        NOT NULL,
    acceptance_criteria       TEXT       NOT NULL DEFAULT '[]',
    task_context              TEXT       NOT NULL DEFAULT '{}',
    task_result               TEXT,
    querying_structured_data  BOOLEAN     NOT NULL DEFAULT 0,
    image_keys                TEXT       NOT NULL DEFAULT '[]',
    variable_keys             TEXT       NOT NULL DEFAULT '[]',
    tools                     TEXT       NOT NULL DEFAULT '[]',
    input_variable_filepaths  TEXT       NOT NULL DEFAULT '{}',
    input_image_filepaths     TEXT       NOT NULL DEFAULT '{}',
    output_variable_filepaths TEXT       NOT NULL DEFAULT '{}',
    output_image_filepaths    TEXT       NOT NULL DEFAULT '{}',
    current_attempt           INTEGER     NOT NULL DEFAULT 1,
    tables                    TEXT       NOT NULL DEFAULT '[]',
    filepaths                 TEXT       NOT NULL DEFAULT '[]',
    agent_metadata            TEXT       NOT NULL DEFAULT '{}',
    schema_version            INTEGER     NOT NULL DEFAULT 2,
    created_at                TIMESTAMP        NOT NULL,
    updated_at                TIMESTAMP        NOT NULL,
    CONSTRAINT workers_task_status_check
        CHECK (task_status IN ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED_VALIDATION', 'RECORDED')),
    CONSTRAINT workers_task_context_json_check CHECK (json_valid(task_context)),
    CONSTRAINT workers_tables_json_check CHECK (json_valid(tables))
);
CREATE INDEX workers_planner_id_idx ON workers (planner_id, created_at);
CREATE INDEX workers_project_id_idx ON workers (project_id);

-- The messages of planners and of workers: multimodal JSON content.
CREATE TABLE planner_messages (
    id         TEXT        NOT NULL PRIMARY KEY,
    owner_id   TEXT        NOT NULL REFERENCES planners (id) ON DELETE CASCADE,
    project_id TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    role       TEXT        NOT NULL,
    content    TEXT       NOT NULL,
    created_at TIMESTAMP        NOT NULL,
    CONSTRAINT planner_messages_role_check CHECK (role IN ('USER', 'ASSISTANT', 'SYSTEM', 'DEVELOPER')),
    CONSTRAINT planner_messages_content_json_check CHECK (json_valid(content))
);
CREATE INDEX planner_messages_owner_id_idx ON planner_messages (owner_id, created_at);

CREATE TABLE worker_messages (
    id         TEXT        NOT NULL PRIMARY KEY,
    owner_id   TEXT        NOT NULL REFERENCES workers (id) ON DELETE CASCADE,
    project_id TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    role       TEXT        NOT NULL,
    content    TEXT       NOT NULL,
    created_at TIMESTAMP        NOT NULL,
    CONSTRAINT worker_messages_role_check CHECK (role IN ('USER', 'ASSISTANT', 'SYSTEM', 'DEVELOPER')),
    CONSTRAINT worker_messages_content_json_check CHECK (json_valid(content))
);
CREATE INDEX worker_messages_owner_id_idx ON worker_messages (owner_id, created_at);

-- A planner's links to routers; message_id set: the link is to one message of
-- the router (the data model's router_message_planner_links). Clearing a
-- router's messages keeps its links to planners (message_id becomes NULL).
CREATE TABLE router_planner_links (
    id                TEXT        NOT NULL PRIMARY KEY,
    router_id         TEXT        NOT NULL REFERENCES routers (id) ON DELETE CASCADE,
    planner_id        TEXT        NOT NULL REFERENCES planners (id) ON DELETE CASCADE,
    message_id        TEXT        REFERENCES router_messages (id) ON DELETE SET NULL,
    relationship_type TEXT        NOT NULL,
    created_at        TIMESTAMP        NOT NULL,
    CONSTRAINT router_planner_links_type_check CHECK (relationship_type IN ('INITIATED', 'CONTINUED', 'FORKED'))
);
CREATE UNIQUE INDEX router_planner_links_message_key ON router_planner_links (router_id, planner_id, message_id)
    WHERE message_id IS NOT NULL;
CREATE INDEX router_planner_links_router_id_idx ON router_planner_links (router_id, created_at);
CREATE INDEX router_planner_links_planner_id_idx ON router_planner_links (planner_id, created_at);
CREATE INDEX router_planner_links_message_id_idx ON router_planner_links (message_id);

-- The function queue.
CREATE TABLE queue_functions (
    id            TEXT        NOT NULL PRIMARY KEY,
    name          TEXT        NOT NULL,
    max_attempts  INTEGER     NOT NULL,
    lease_seconds INTEGER     NOT NULL,
    created_at    TIMESTAMP        NOT NULL,
    updated_at    TIMESTAMP        NOT NULL,
    CONSTRAINT queue_functions_name_key UNIQUE (name),
    CONSTRAINT queue_functions_max_attempts_check CHECK (max_attempts >= 1),
    CONSTRAINT queue_functions_lease_seconds_check CHECK (lease_seconds >= 1)
);

-- Items are kept in their final status (COMPLETED, FAILED, CANCELLED) so
-- that what ran stays visible. claimer_id is the API token holding the
-- current lease; errors is every failed attempt, in order.
CREATE TABLE queue_items (
    id               TEXT        NOT NULL PRIMARY KEY,
    project_id       TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    entity_type      TEXT        NOT NULL,
    entity_id        TEXT        NOT NULL,
    function_name    TEXT        NOT NULL REFERENCES queue_functions (name) ON DELETE RESTRICT,
    payload          TEXT       NOT NULL DEFAULT '{}',
    status           TEXT        NOT NULL,
    priority         INTEGER     NOT NULL DEFAULT 0,
    unique_key       TEXT,
    attempt          INTEGER     NOT NULL DEFAULT 0,
    max_attempts     INTEGER     NOT NULL,
    lease_seconds    INTEGER     NOT NULL,
    scheduled_at     TIMESTAMP        NOT NULL,
    error_message    TEXT,
    errors           TEXT       NOT NULL DEFAULT '[]',
    result           TEXT ,
    claimed_by       TEXT,
    claimer_id       TEXT,
    lease_expires_at TIMESTAMP,
    finished_at      TIMESTAMP,
    created_at       TIMESTAMP        NOT NULL,
    updated_at       TIMESTAMP        NOT NULL,
    CONSTRAINT queue_items_entity_type_check CHECK (entity_type IN ('PLANNER', 'WORKER')),
    CONSTRAINT queue_items_status_check CHECK (status IN ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED')),
    CONSTRAINT queue_items_attempt_check CHECK (attempt >= 0 AND max_attempts >= 1 AND lease_seconds >= 1),
    CONSTRAINT queue_items_lease_check CHECK (status <> 'IN_PROGRESS' OR lease_expires_at IS NOT NULL),
    CONSTRAINT queue_items_payload_json_check CHECK (json_valid(payload)),
    CONSTRAINT queue_items_errors_json_check CHECK (json_valid(errors))
);
-- A unique key is held by one PENDING or IN_PROGRESS item of a function per project.
CREATE UNIQUE INDEX queue_items_unique_key ON queue_items (project_id, function_name, unique_key)
    WHERE unique_key IS NOT NULL AND status IN ('PENDING', 'IN_PROGRESS');
-- Claims: due PENDING items by priority, then age.
CREATE INDEX queue_items_claim_idx ON queue_items (function_name, priority DESC, created_at, id)
    WHERE status = 'PENDING';
-- The rescue: IN_PROGRESS items by lease expiry.
CREATE INDEX queue_items_lease_idx ON queue_items (lease_expires_at) WHERE status = 'IN_PROGRESS';
CREATE INDEX queue_items_project_id_idx ON queue_items (project_id, created_at);
CREATE INDEX queue_items_entity_id_idx ON queue_items (entity_id);

-- Event kinds: the domain names them (internal/domain), so that each part of
-- the API adds kinds without touching this table again. The constraint keeps
-- its name and only bounds the value. SQLite cannot alter a constraint: the
-- table is rebuilt (nothing references it).
CREATE TABLE events_0010 (
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
    CONSTRAINT events_type_check CHECK (length(type) BETWEEN 1 AND 64),
    CONSTRAINT events_payload_json_check CHECK (json_valid(payload))
);
INSERT INTO events_0010 (project_id, seq, run_id, task_id, agent_id, type, payload, occurred_at)
    SELECT project_id, seq, run_id, task_id, agent_id, type, payload, occurred_at FROM events;
DROP TABLE events;
ALTER TABLE events_0010 RENAME TO events;
CREATE INDEX events_run_id_seq_idx ON events (run_id, seq) WHERE run_id IS NOT NULL;

-- +goose Down

DROP TABLE queue_items;
DROP TABLE queue_functions;
DROP TABLE router_planner_links;
DROP TABLE worker_messages;
DROP TABLE planner_messages;
DROP TABLE workers;
DROP TABLE planners;
DROP TABLE router_messages;
DROP TABLE routers;
