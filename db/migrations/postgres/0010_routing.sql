-- Taskgraph schema, part 10: routing — routers and their messages, the
-- planners a router starts (linked to the router, and to the message they
-- answer), the workers a planner runs, the messages of planners and workers —
-- and the function queue that runs planner and worker functions in the
-- background.
--
-- PostgreSQL dialect. db/migrations/sqlite/0010_routing.sql has the same tables,
-- columns and constraint names (db/parity_test.go compares them).
--
-- Queue times that decide liveness (scheduled_at, lease_expires_at) are
-- written from the database clock, so that replicas agree.

-- +goose Up

CREATE TABLE routers (
    id             UUID        NOT NULL PRIMARY KEY,
    project_id     UUID        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    status         TEXT        NOT NULL,
    model          TEXT        NOT NULL,
    temperature    DOUBLE PRECISION     NOT NULL,
    title          TEXT,
    preview        TEXT,
    agent_metadata JSONB      NOT NULL DEFAULT '{}',
    schema_version INTEGER     NOT NULL DEFAULT 2,
    created_at     TIMESTAMPTZ        NOT NULL,
    updated_at     TIMESTAMPTZ        NOT NULL,
    CONSTRAINT routers_status_check CHECK (status IN ('ACTIVE', 'PROCESSING', 'COMPLETED', 'FAILED', 'ARCHIVED'))
);
CREATE INDEX routers_project_id_idx ON routers (project_id, created_at);

CREATE TABLE router_messages (
    id         UUID        NOT NULL PRIMARY KEY,
    router_id  UUID        NOT NULL REFERENCES routers (id) ON DELETE CASCADE,
    project_id UUID        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    role       TEXT        NOT NULL,
    content    TEXT        NOT NULL,
    created_at TIMESTAMPTZ        NOT NULL,
    CONSTRAINT router_messages_role_check CHECK (role IN ('USER', 'ASSISTANT'))
);
CREATE INDEX router_messages_router_id_idx ON router_messages (router_id, created_at);

CREATE TABLE planners (
    id                  UUID        NOT NULL PRIMARY KEY,
    project_id          UUID        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    planner_name        TEXT,
    user_question       TEXT        NOT NULL,
    instruction         TEXT,
    execution_plan      TEXT,
    model               TEXT        NOT NULL,
    temperature         DOUBLE PRECISION     NOT NULL,
    failed_task_limit   INTEGER     NOT NULL,
    -- Workers of this planner that reached FAILED_VALIDATION, retries included.
    failed_task_count   INTEGER     NOT NULL DEFAULT 0,
    status              TEXT        NOT NULL,
    user_response       TEXT,
    next_task           TEXT,
    variable_file_paths JSONB      NOT NULL DEFAULT '{}',
    image_file_paths    JSONB      NOT NULL DEFAULT '{}',
    agent_metadata      JSONB      NOT NULL DEFAULT '{}',
    schema_version      INTEGER     NOT NULL DEFAULT 2,
    created_at          TIMESTAMPTZ        NOT NULL,
    updated_at          TIMESTAMPTZ        NOT NULL,
    CONSTRAINT planners_status_check CHECK (status IN ('PLANNING', 'EXECUTING', 'COMPLETED', 'FAILED')),
    CONSTRAINT planners_failed_task_limit_check CHECK (failed_task_limit >= 1)
);
CREATE INDEX planners_project_id_idx ON planners (project_id);

CREATE TABLE workers (
    id                        UUID        NOT NULL PRIMARY KEY,
    planner_id                UUID        NOT NULL REFERENCES planners (id) ON DELETE CASCADE,
    project_id                UUID        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    worker_name               TEXT,
    task_status               TEXT        NOT NULL,
    next_task                 TEXT,
    task_description          TEXT        NOT NULL,
    acceptance_criteria       JSONB      NOT NULL DEFAULT '[]',
    task_context              JSONB      NOT NULL DEFAULT '{}',
    task_result               TEXT,
    querying_structured_data  BOOLEAN     NOT NULL DEFAULT FALSE,
    image_keys                JSONB      NOT NULL DEFAULT '[]',
    variable_keys             JSONB      NOT NULL DEFAULT '[]',
    tools                     JSONB      NOT NULL DEFAULT '[]',
    input_variable_filepaths  JSONB      NOT NULL DEFAULT '{}',
    input_image_filepaths     JSONB      NOT NULL DEFAULT '{}',
    output_variable_filepaths JSONB      NOT NULL DEFAULT '{}',
    output_image_filepaths    JSONB      NOT NULL DEFAULT '{}',
    current_attempt           INTEGER     NOT NULL DEFAULT 1,
    tables                    JSONB      NOT NULL DEFAULT '[]',
    filepaths                 JSONB      NOT NULL DEFAULT '[]',
    agent_metadata            JSONB      NOT NULL DEFAULT '{}',
    schema_version            INTEGER     NOT NULL DEFAULT 2,
    created_at                TIMESTAMPTZ        NOT NULL,
    updated_at                TIMESTAMPTZ        NOT NULL,
    CONSTRAINT workers_task_status_check
        CHECK (task_status IN ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED_VALIDATION', 'RECORDED'))
);
CREATE INDEX workers_planner_id_idx ON workers (planner_id, created_at);
CREATE INDEX workers_project_id_idx ON workers (project_id);

-- The messages of planners and of workers: multimodal JSON content.
CREATE TABLE planner_messages (
    id         UUID        NOT NULL PRIMARY KEY,
    owner_id   UUID        NOT NULL REFERENCES planners (id) ON DELETE CASCADE,
    project_id UUID        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    role       TEXT        NOT NULL,
    content    JSONB      NOT NULL,
    created_at TIMESTAMPTZ        NOT NULL,
    CONSTRAINT planner_messages_role_check CHECK (role IN ('USER', 'ASSISTANT', 'SYSTEM', 'DEVELOPER'))
);
CREATE INDEX planner_messages_owner_id_idx ON planner_messages (owner_id, created_at);

CREATE TABLE worker_messages (
    id         UUID        NOT NULL PRIMARY KEY,
    owner_id   UUID        NOT NULL REFERENCES workers (id) ON DELETE CASCADE,
    project_id UUID        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    role       TEXT        NOT NULL,
    content    JSONB      NOT NULL,
    created_at TIMESTAMPTZ        NOT NULL,
    CONSTRAINT worker_messages_role_check CHECK (role IN ('USER', 'ASSISTANT', 'SYSTEM', 'DEVELOPER'))
);
CREATE INDEX worker_messages_owner_id_idx ON worker_messages (owner_id, created_at);

-- A planner's links to routers; message_id set: the link is to one message of
-- the router (the data model's router_message_planner_links). Clearing a
-- router's messages keeps its links to planners (message_id becomes NULL).
CREATE TABLE router_planner_links (
    id                UUID        NOT NULL PRIMARY KEY,
    router_id         UUID        NOT NULL REFERENCES routers (id) ON DELETE CASCADE,
    planner_id        UUID        NOT NULL REFERENCES planners (id) ON DELETE CASCADE,
    message_id        UUID        REFERENCES router_messages (id) ON DELETE SET NULL,
    relationship_type TEXT        NOT NULL,
    created_at        TIMESTAMPTZ        NOT NULL,
    CONSTRAINT router_planner_links_type_check CHECK (relationship_type IN ('INITIATED', 'CONTINUED', 'FORKED'))
);
CREATE UNIQUE INDEX router_planner_links_message_key ON router_planner_links (router_id, planner_id, message_id)
    WHERE message_id IS NOT NULL;
CREATE INDEX router_planner_links_router_id_idx ON router_planner_links (router_id, created_at);
CREATE INDEX router_planner_links_planner_id_idx ON router_planner_links (planner_id, created_at);
CREATE INDEX router_planner_links_message_id_idx ON router_planner_links (message_id);

-- The function queue.
CREATE TABLE queue_functions (
    id            UUID        NOT NULL PRIMARY KEY,
    name          TEXT        NOT NULL,
    max_attempts  INTEGER     NOT NULL,
    lease_seconds INTEGER     NOT NULL,
    created_at    TIMESTAMPTZ        NOT NULL,
    updated_at    TIMESTAMPTZ        NOT NULL,
    CONSTRAINT queue_functions_name_key UNIQUE (name),
    CONSTRAINT queue_functions_max_attempts_check CHECK (max_attempts >= 1),
    CONSTRAINT queue_functions_lease_seconds_check CHECK (lease_seconds >= 1)
);

-- Items are kept in their final status (COMPLETED, FAILED, CANCELLED) so
-- that what ran stays visible. claimer_id is the API token holding the
-- current lease; errors is every failed attempt, in order.
CREATE TABLE queue_items (
    id               UUID        NOT NULL PRIMARY KEY,
    project_id       UUID        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    entity_type      TEXT        NOT NULL,
    entity_id        UUID        NOT NULL,
    function_name    TEXT        NOT NULL REFERENCES queue_functions (name) ON DELETE RESTRICT,
    payload          JSONB      NOT NULL DEFAULT '{}',
    status           TEXT        NOT NULL,
    priority         INTEGER     NOT NULL DEFAULT 0,
    unique_key       TEXT,
    attempt          INTEGER     NOT NULL DEFAULT 0,
    max_attempts     INTEGER     NOT NULL,
    lease_seconds    INTEGER     NOT NULL,
    scheduled_at     TIMESTAMPTZ        NOT NULL,
    error_message    TEXT,
    errors           JSONB      NOT NULL DEFAULT '[]',
    result           JSONB,
    claimed_by       TEXT,
    claimer_id       TEXT,
    lease_expires_at TIMESTAMPTZ,
    finished_at      TIMESTAMPTZ,
    created_at       TIMESTAMPTZ        NOT NULL,
    updated_at       TIMESTAMPTZ        NOT NULL,
    CONSTRAINT queue_items_entity_type_check CHECK (entity_type IN ('PLANNER', 'WORKER')),
    CONSTRAINT queue_items_status_check CHECK (status IN ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED')),
    CONSTRAINT queue_items_attempt_check CHECK (attempt >= 0 AND max_attempts >= 1 AND lease_seconds >= 1),
    CONSTRAINT queue_items_lease_check CHECK (status <> 'IN_PROGRESS' OR lease_expires_at IS NOT NULL)
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
-- its name and only bounds the value.
ALTER TABLE events DROP CONSTRAINT IF EXISTS events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (length(type) BETWEEN 1 AND 64);

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
