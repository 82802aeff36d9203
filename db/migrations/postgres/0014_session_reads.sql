-- Taskgraph schema, part 14: the reads of a run's and a session's records.
-- agentSessions(runId:) lists the sessions opened for a run's build agents,
-- and AgentSession.lessons the lessons recorded in a session, oldest first.
--
-- Same indexes in both dialects.

-- +goose Up

CREATE INDEX agent_sessions_run_id_idx ON agent_sessions (run_id) WHERE run_id IS NOT NULL;
CREATE INDEX lessons_session_id_created_at_idx ON lessons (session_id, created_at) WHERE session_id IS NOT NULL;

-- +goose Down

DROP INDEX lessons_session_id_created_at_idx;
DROP INDEX agent_sessions_run_id_idx;
