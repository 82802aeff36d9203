-- Taskgraph schema, part 14: the schedule of a task list (WAVES or EAGER) and
-- the rows that let claims and completions of one run proceed side by side
-- instead of queueing on the run's row.
--
-- * run_slots: a run's maxParallelAgents slots. A claim takes a free one
--   (FOR UPDATE SKIP LOCKED), its agent holds it while live; at most
--   maxParallelAgents agents live at once because there are no more slots.
--   claims counts the agents a slot has held (ExecutionRun.agentsSpawned).
--   SQLite has one writer at a time: its claims need no row locks.
-- * run_dependencies, run_conflicts: an EAGER run's ordering constraints and
--   conflicting pairs among its tasks, fixed when the run starts.
-- * wave_task_assignments.claim_rank: the order in which an EAGER run hands
--   out its tasks — the longest chain of remaining work first, then the
--   plan's order.
-- * execution_waves' counters now move with each task's outcome, and an
--   active run's counters are read from its waves and slots (the stored ones
--   are sealed when the run ends).
--
-- SQLite dialect. db/migrations/postgres/0014_schedule_slots.sql has the same
-- tables, columns and constraint names.

-- +goose Up

ALTER TABLE task_lists ADD COLUMN schedule TEXT NOT NULL DEFAULT 'WAVES'
    CONSTRAINT task_lists_schedule_check CHECK (schedule IN ('WAVES', 'EAGER'));
ALTER TABLE execution_runs ADD COLUMN schedule TEXT NOT NULL DEFAULT 'WAVES'
    CONSTRAINT execution_runs_schedule_check CHECK (schedule IN ('WAVES', 'EAGER'));
ALTER TABLE build_agents ADD COLUMN slot INTEGER;
ALTER TABLE wave_task_assignments ADD COLUMN claim_rank INTEGER NOT NULL DEFAULT 0;

CREATE TABLE run_slots (
    run_id   TEXT    NOT NULL REFERENCES execution_runs (id) ON DELETE CASCADE,
    slot     INTEGER NOT NULL,
    -- The live agent holding the slot (no foreign key: the claim takes the
    -- slot before it inserts the agent).
    agent_id TEXT,
    claims   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, slot),
    CONSTRAINT run_slots_slot_check CHECK (slot >= 1),
    CONSTRAINT run_slots_claims_check CHECK (claims >= 0)
);

CREATE TABLE run_dependencies (
    run_id           TEXT NOT NULL REFERENCES execution_runs (id) ON DELETE CASCADE,
    task_id          TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    waits_on_task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    PRIMARY KEY (run_id, task_id, waits_on_task_id)
);

CREATE INDEX run_dependencies_waits_on_task_id_idx ON run_dependencies (waits_on_task_id);

CREATE TABLE run_conflicts (
    run_id        TEXT NOT NULL REFERENCES execution_runs (id) ON DELETE CASCADE,
    task_id       TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    other_task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    PRIMARY KEY (run_id, task_id, other_task_id)
);

CREATE INDEX run_conflicts_other_task_id_idx ON run_conflicts (other_task_id);

-- An EAGER run's pending places in claim order.
CREATE INDEX wave_task_assignments_claim_rank_idx ON wave_task_assignments (run_id, task_status, claim_rank);
-- A list's tasks by status in claim order: WAVES claims, an active run's blocked tasks.
CREATE INDEX tasks_task_list_id_status_idx ON tasks (task_list_id, status, priority_score DESC, display_id);

-- Active runs move on to slots and counted waves.
UPDATE execution_waves SET
    completed_count = (SELECT COUNT(*) FROM wave_task_assignments a WHERE a.wave_id = execution_waves.id AND a.task_status = 'COMPLETED'),
    failed_count = (SELECT COUNT(*) FROM wave_task_assignments a WHERE a.wave_id = execution_waves.id AND a.task_status = 'FAILED'),
    skipped_count = (SELECT COUNT(*) FROM wave_task_assignments a WHERE a.wave_id = execution_waves.id AND a.task_status = 'SKIPPED')
    WHERE run_id IN (SELECT id FROM execution_runs WHERE status IN ('PENDING', 'RUNNING', 'PAUSED'));

WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
INSERT INTO run_slots (run_id, slot, agent_id, claims)
    SELECT r.id, n.i, NULL, 0 FROM execution_runs r JOIN n ON n.i <= r.max_parallel_agents
    WHERE r.status IN ('PENDING', 'RUNNING', 'PAUSED');

UPDATE build_agents SET slot = (SELECT COUNT(*) FROM build_agents b
    WHERE b.run_id = build_agents.run_id AND b.status <> 'TERMINATED'
      AND (b.spawned_at < build_agents.spawned_at OR (b.spawned_at = build_agents.spawned_at AND b.id <= build_agents.id)))
    WHERE status <> 'TERMINATED';

UPDATE run_slots SET
    agent_id = (SELECT a.id FROM build_agents a WHERE a.run_id = run_slots.run_id AND a.slot = run_slots.slot
        AND a.status <> 'TERMINATED'),
    claims = CASE WHEN slot = 1 THEN (SELECT COUNT(*) FROM build_agents a WHERE a.run_id = run_slots.run_id) ELSE 0 END;

-- +goose Down

DROP INDEX tasks_task_list_id_status_idx;
DROP INDEX wave_task_assignments_claim_rank_idx;
DROP TABLE run_conflicts;
DROP TABLE run_dependencies;
DROP TABLE run_slots;
ALTER TABLE wave_task_assignments DROP COLUMN claim_rank;
ALTER TABLE build_agents DROP COLUMN slot;
ALTER TABLE execution_runs DROP COLUMN schedule;
ALTER TABLE task_lists DROP COLUMN schedule;
