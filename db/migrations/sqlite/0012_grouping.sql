-- Taskgraph schema, part 12: auto-grouping suggestions, the grouping weights
-- of each project, task agent instances, the progress of the background
-- grouping over each project's event log; idea stages as an enum.
--
-- Same tables, columns and constraint names in both dialects.

-- +goose Up

CREATE TABLE grouping_criteria_weights (
    id                            TEXT        NOT NULL PRIMARY KEY,
    project_id                    TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    file_overlap_weight           REAL NOT NULL,
    dependency_weight             REAL NOT NULL,
    category_weight               REAL NOT NULL,
    description_similarity_weight REAL NOT NULL,
    component_weight              REAL NOT NULL,
    created_at                    TIMESTAMP NOT NULL,
    updated_at                    TIMESTAMP NOT NULL,
    CONSTRAINT grouping_criteria_weights_project_id_key UNIQUE (project_id)
);

CREATE TABLE task_agent_instances (
    id                  TEXT        NOT NULL PRIMARY KEY,
    project_id          TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    task_list_id        TEXT        REFERENCES task_lists (id) ON DELETE CASCADE,
    is_evaluation_queue BOOLEAN     NOT NULL DEFAULT 0,
    telegram_channel_id TEXT,
    -- Write-only: never returned by the API.
    telegram_bot_token  TEXT,
    status              TEXT        NOT NULL,
    last_heartbeat_at   TIMESTAMP,
    error_count         INTEGER     NOT NULL DEFAULT 0,
    last_error          TEXT,
    tasks_processed     INTEGER     NOT NULL DEFAULT 0,
    suggestions_made    INTEGER     NOT NULL DEFAULT 0,
    questions_asked     INTEGER     NOT NULL DEFAULT 0,
    created_at          TIMESTAMP NOT NULL,
    updated_at          TIMESTAMP NOT NULL,
    terminated_at       TIMESTAMP,
    CONSTRAINT task_agent_instances_status_check CHECK (status IN ('ACTIVE', 'PAUSED', 'TERMINATED')),
    CONSTRAINT task_agent_instances_target_check CHECK ((task_list_id IS NULL) = is_evaluation_queue)
);

-- One live (ACTIVE or PAUSED) task agent per list and per evaluation queue.
CREATE UNIQUE INDEX task_agent_instances_live_list_key ON task_agent_instances (task_list_id)
    WHERE status <> 'TERMINATED' AND task_list_id IS NOT NULL;
CREATE UNIQUE INDEX task_agent_instances_live_queue_key ON task_agent_instances (project_id)
    WHERE status <> 'TERMINATED' AND is_evaluation_queue;
CREATE INDEX task_agent_instances_project_idx ON task_agent_instances (project_id, created_at);

CREATE TABLE grouping_suggestions (
    id                      TEXT        NOT NULL PRIMARY KEY,
    project_id              TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    status                  TEXT        NOT NULL,
    suggested_name          TEXT        NOT NULL,
    -- JSON array of task ids, in display order.
    suggested_tasks         TEXT       NOT NULL,
    -- The sorted task ids joined by commas: one PENDING suggestion per set.
    task_set_key            TEXT        NOT NULL,
    grouping_reason         TEXT        NOT NULL,
    similarity_score        REAL NOT NULL,
    file_overlap            REAL NOT NULL,
    dependency              REAL NOT NULL,
    category                REAL NOT NULL,
    description_similarity  REAL NOT NULL,
    component               REAL NOT NULL,
    triggered_by            TEXT        NOT NULL,
    trigger_task_id         TEXT        REFERENCES tasks (id) ON DELETE SET NULL,
    created_task_list_id    TEXT        REFERENCES task_lists (id) ON DELETE SET NULL,
    task_agent_id           TEXT        REFERENCES task_agent_instances (id) ON DELETE SET NULL,
    resolved_by             TEXT,
    resolved_at             TIMESTAMP,
    expires_at              TIMESTAMP NOT NULL,
    created_at              TIMESTAMP NOT NULL,
    CONSTRAINT grouping_suggestions_status_check CHECK (status IN ('PENDING', 'ACCEPTED', 'REJECTED', 'EXPIRED', 'MODIFIED')),
    CONSTRAINT grouping_suggestions_triggered_by_check CHECK (triggered_by IN ('TASK_CREATED', 'DEPENDENCY_CHANGED', 'MANUAL'))
);

CREATE UNIQUE INDEX grouping_suggestions_pending_set_key ON grouping_suggestions (project_id, task_set_key)
    WHERE status = 'PENDING';
CREATE INDEX grouping_suggestions_project_idx ON grouping_suggestions (project_id, created_at, id);
CREATE INDEX grouping_suggestions_expiry_idx ON grouping_suggestions (expires_at) WHERE status = 'PENDING';

-- How far the background grouping has read each project's event log and its
-- dependency links. A replica takes the row (FOR UPDATE SKIP LOCKED on
-- PostgreSQL) and advances it in the transaction that writes the
-- suggestions, so each trigger is handled once.
CREATE TABLE grouping_cursors (
    project_id      TEXT        NOT NULL PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    last_seq        INTEGER      NOT NULL DEFAULT 0,
    last_link_at    TIMESTAMP,
    updated_at      TIMESTAMP NOT NULL
);

-- The DEPENDS_ON/BLOCKS links the background grouping has seen, so that it
-- notices their removal as well as new ones.
CREATE TABLE grouping_seen_links (
    relationship_id TEXT        NOT NULL PRIMARY KEY,
    project_id      TEXT        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    source_task_id  TEXT        NOT NULL,
    target_task_id  TEXT        NOT NULL
);
CREATE INDEX grouping_seen_links_project_idx ON grouping_seen_links (project_id);

INSERT INTO grouping_seen_links (relationship_id, project_id, source_task_id, target_task_id)
SELECT r.id, t.project_id, r.source_task_id, r.target_task_id
FROM task_relationships r JOIN tasks t ON t.id = r.source_task_id
WHERE r.relationship_type IN ('DEPENDS_ON', 'BLOCKS');

-- Existing projects start from their current position: only later tasks and
-- links trigger suggestions.
INSERT INTO grouping_cursors (project_id, last_seq, last_link_at, updated_at)
SELECT p.id, COALESCE((SELECT MAX(e.seq) FROM events e WHERE e.project_id = p.id), 0),
       (SELECT MAX(r.created_at) FROM task_relationships r JOIN tasks t ON t.id = r.source_task_id WHERE t.project_id = p.id),
       CURRENT_TIMESTAMP
FROM projects p;

-- The event kinds of grouping suggestions need no change to the event log:
-- its type check admits every upper-case kind since 0011.

-- Idea stages become an enum: known stages upper-cased, anything else SPARK.
UPDATE ideas SET lifecycle_stage = CASE
    WHEN UPPER(lifecycle_stage) IN ('SPARK', 'CLARIFY', 'RESEARCH', 'SPECIFY', 'PLANNED', 'BUILDING', 'SHIPPED', 'ARCHIVED')
    THEN UPPER(lifecycle_stage) ELSE 'SPARK' END;

-- +goose Down

DROP TABLE grouping_seen_links;
DROP TABLE grouping_cursors;
DROP TABLE grouping_suggestions;
DROP TABLE task_agent_instances;
DROP TABLE grouping_criteria_weights;
