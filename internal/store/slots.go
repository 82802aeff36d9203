package store

import (
	"context"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// A run's slots, 1 … maxParallelAgents: a live agent holds one. They stand
// for the run's concurrency limit so that claims never lock the run's row: a
// claim takes a free slot with FOR UPDATE SKIP LOCKED (on PostgreSQL) and
// gives up when none is left; an agent's end frees its slot in the
// transaction that ends it. Lock order: run, slot, agent, task.

// InsertSlots creates the n slots of a new run.
func (q RunQueries) InsertSlots(ctx context.Context, runID string, n int) error {
	type slot struct {
		RunID string `db:"run_id"`
		Slot  int    `db:"slot"`
	}
	rows := make([]slot, n)
	for i := range rows {
		rows[i] = slot{runID, i + 1}
	}
	return insertBatches(ctx, q, "run_slots", "run_id, slot", rows)
}

// TakeSlot gives agentID the lowest free slot of the run that no other
// transaction holds and returns its number; ErrNotFound: none is free. The
// slot stays locked until the transaction ends.
func (q RunQueries) TakeSlot(ctx context.Context, runID, agentID string) (int, error) {
	var n int
	err := q.getP(ctx, &n, `UPDATE run_slots SET agent_id = ?, claims = claims + 1 WHERE run_id = ? AND slot =
		(SELECT slot FROM run_slots WHERE run_id = ? AND agent_id IS NULL ORDER BY slot LIMIT 1`+q.skipLocked()+`)
		RETURNING slot`, agentID, runID, runID)
	return n, err
}

// LockSlot locks a run's slot (waiting for it) and returns the agent that
// holds it, "" when free. ErrNotFound: the run has no such slot.
func (q RunQueries) LockSlot(ctx context.Context, runID string, slot int) (string, error) {
	var agent *string
	if err := q.getP(ctx, &agent, `SELECT agent_id FROM run_slots WHERE run_id = ? AND slot = ?`+q.forUpdate(),
		runID, slot); err != nil {
		return "", err
	}
	if agent == nil {
		return "", nil
	}
	return *agent, nil
}

// LockSlots locks every slot of a run, waiting for claims and settlements
// in flight: pausing and cancelling a run take them so that no claim
// commits on a run that was paused or cancelled before it.
func (q RunQueries) LockSlots(ctx context.Context, runID string) error {
	if q.db.dialect != Postgres || !q.inTx {
		return nil
	}
	var slots []int
	return q.selectx(ctx, &slots, `SELECT slot FROM run_slots WHERE run_id = ? ORDER BY slot`+q.forUpdate(), runID)
}

// FreeSlot frees the slot agentID holds in a run.
func (q RunQueries) FreeSlot(ctx context.Context, runID string, slot int, agentID string) error {
	_, err := q.execP(ctx, `UPDATE run_slots SET agent_id = NULL WHERE run_id = ? AND slot = ? AND agent_id = ?`,
		runID, slot, agentID)
	return err
}

// CountLiveAgents counts a run's agents that hold a slot: its live agents.
func (q RunQueries) CountLiveAgents(ctx context.Context, runID string) (int, error) {
	var n int
	err := q.getP(ctx, &n, `SELECT COUNT(*) FROM run_slots WHERE run_id = ? AND agent_id IS NOT NULL`, runID)
	return n, err
}

// ClaimState is what a claim reads of a run before it locks anything: its
// waves in order and its live agents (the slots held), in one statement.
func (q RunQueries) ClaimState(ctx context.Context, runID string) (live int, waves []*domain.Wave, err error) {
	var rows []struct {
		domain.Wave
		Live int `db:"live_agents"`
	}
	if err := q.selectP(ctx, &rows, `SELECT w.*, (SELECT COUNT(*) FROM run_slots s WHERE s.run_id = w.run_id
		AND s.agent_id IS NOT NULL) AS live_agents FROM execution_waves w WHERE w.run_id = ? ORDER BY w.wave_number`,
		runID); err != nil {
		return 0, nil, err
	}
	waves = make([]*domain.Wave, len(rows))
	for i := range rows {
		waves[i], live = &rows[i].Wave, rows[i].Live
	}
	return live, waves, nil
}

// RunClaimState is RunRow and ClaimState in one statement: a run's own row
// (its live counters stale, as RunRow's), its waves in order and its live
// agents. ErrNotFound: no such run.
func (q RunQueries) RunClaimState(ctx context.Context, runID string) (*domain.ExecutionRun, int, []*domain.Wave, error) {
	var rows []struct {
		domain.ExecutionRun
		Wave domain.Wave `db:"wave"`
		Live int         `db:"live_agents"`
	}
	if err := q.selectP(ctx, &rows, `SELECT r.*, `+prefixed("w", "wave", waveColumns)+`, (SELECT COUNT(*) FROM run_slots s
		WHERE s.run_id = r.id AND s.agent_id IS NOT NULL) AS live_agents
		FROM execution_runs r JOIN execution_waves w ON w.run_id = r.id WHERE r.id = ? ORDER BY w.wave_number`,
		runID); err != nil {
		return nil, 0, nil, err
	}
	if len(rows) == 0 { // no such run, or one without waves
		r, err := q.RunRow(ctx, runID)
		if err != nil {
			return nil, 0, nil, err
		}
		live, waves, err := q.ClaimState(ctx, runID)
		return r, live, waves, err
	}
	waves := make([]*domain.Wave, len(rows))
	for i := range rows {
		waves[i] = &rows[i].Wave
	}
	r := rows[0].ExecutionRun
	return &r, rows[0].Live, waves, nil
}

// ClaimRun is a run's row as a claim reads it once it holds its task and
// slot, with the database clock (the agent's lease starts now) and the
// task's attempts so far in the run.
type ClaimRun struct {
	domain.ExecutionRun
	Now      time.Time `db:"claim_now"`
	Attempts int       `db:"claim_attempts"`
}

// RunForClaim reads a run for a claim of taskID: see ClaimRun.
func (q RunQueries) RunForClaim(ctx context.Context, runID, taskID string) (*ClaimRun, error) {
	clock := "clock_timestamp()"
	if q.db.dialect == SQLite {
		clock = "NULL"
	}
	var c struct {
		domain.ExecutionRun
		Now      *time.Time `db:"claim_now"`
		Attempts int        `db:"claim_attempts"`
	}
	if err := q.getP(ctx, &c, `SELECT r.*, `+clock+` AS claim_now, (SELECT COUNT(*) FROM task_executions e
		WHERE e.run_id = r.id AND e.task_id = ?) AS claim_attempts FROM execution_runs r WHERE r.id = ?`, taskID, runID); err != nil {
		return nil, err
	}
	out := &ClaimRun{ExecutionRun: c.ExecutionRun, Attempts: c.Attempts}
	if c.Now != nil {
		out.Now = c.Now.UTC().Truncate(time.Microsecond)
	} else {
		out.Now = time.Now().UTC().Truncate(time.Microsecond)
	}
	return out, nil
}

// AgentHold is an agent locked for one of its calls, with its execution and
// its run's row (read, not locked).
type AgentHold struct {
	domain.BuildAgent
	Execution domain.TaskExecution `db:"exec"`
	Run       domain.ExecutionRun  `db:"run"`
}

// prefixed lists cols of alias as "prefix.col" (sqlx's names of nested
// struct fields).
func prefixed(alias, prefix, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		c = strings.TrimSpace(c)
		parts[i] = alias + "." + c + ` AS "` + prefix + "." + c + `"`
	}
	return strings.Join(parts, ", ")
}

// HoldAgent loads an agent and, inside a PostgreSQL transaction, locks it,
// with its execution and its run in the same statement. With slot it first
// locks, in the same statement, the slot the agent holds (or held) in its
// run, waiting for it: the lock order is slot, agent. An agent without a
// slot (it ended before slots existed) locks none.
func (q RunQueries) HoldAgent(ctx context.Context, id string, slot bool) (*AgentHold, error) {
	query := `SELECT a.*, ` + prefixed("e", "exec", executionColumns) + `, ` + prefixed("r", "run", runColumns) + `
		FROM build_agents a JOIN task_executions e ON e.agent_id = a.id JOIN execution_runs r ON r.id = a.run_id`
	args := []any{id}
	if q.db.dialect == Postgres && q.inTx {
		if slot {
			// The agent's row is locked above the join, so only once the
			// join has read the slot, which the CTE locks as it reads it.
			query = `WITH s AS (SELECT s.slot FROM run_slots s JOIN build_agents a ON a.run_id = s.run_id AND a.slot = s.slot
				WHERE a.id = ? FOR NO KEY UPDATE OF s) ` + query + ` LEFT JOIN s ON TRUE`
			args = append(args, id)
		}
		query += ` WHERE a.id = ? FOR NO KEY UPDATE OF a`
	} else {
		query += ` WHERE a.id = ?`
	}
	var h AgentHold
	if err := q.getP(ctx, &h, query, args...); err != nil {
		return nil, err
	}
	return &h, nil
}

// EndAgent writes an ended agent (its status and times) and its execution
// (its outcome), and frees the agent's slot — one statement on PostgreSQL.
func (q RunQueries) EndAgent(ctx context.Context, a *domain.BuildAgent, e *domain.TaskExecution) error {
	_, err := q.endAgent(ctx, a, e, nil)
	return err
}

// EndAgentMovingPlace is EndAgent and SetAssignmentStatus(m) — one
// statement on PostgreSQL: it returns the place as it now is, or
// ErrNotFound when the task has no place in the run in one of m.From (the
// agent ended all the same).
func (q RunQueries) EndAgentMovingPlace(ctx context.Context, a *domain.BuildAgent, e *domain.TaskExecution, m PlaceMove) (*domain.WaveTaskAssignment, error) {
	return q.endAgent(ctx, a, e, &m)
}

func (q RunQueries) endAgent(ctx context.Context, a *domain.BuildAgent, e *domain.TaskExecution, m *PlaceMove) (*domain.WaveTaskAssignment, error) {
	const updateAgent = `UPDATE build_agents SET status = :status, last_heartbeat_at = :last_heartbeat_at,
		heartbeat_count = :heartbeat_count, progress_percent = :progress_percent, current_step = :current_step,
		memory_mb = :memory_mb, cpu_percent = :cpu_percent, terminated_at = :terminated_at,
		termination_reason = :termination_reason, error_message = :error_message,
		consecutive_missed_heartbeats = :consecutive_missed_heartbeats, end_reason = :end_reason,
		tasks_completed = :tasks_completed, tasks_failed = :tasks_failed, total_duration_ms = :total_duration_ms
		WHERE id = :id`
	const updateExecution = `UPDATE task_executions SET status = :status, ended_at = :ended_at,
		duration_ms = :duration_ms, last_error = :last_error, files_modified = :files_modified,
		git_commits = :git_commits WHERE id = :id`
	if q.db.dialect != Postgres {
		if _, err := q.namedExecP(ctx, updateAgent, a); err != nil {
			return nil, err
		}
		if a.Slot != nil {
			if err := q.FreeSlot(ctx, a.RunID, *a.Slot, a.ID); err != nil {
				return nil, err
			}
		}
		if _, err := q.namedExecP(ctx, updateExecution, e); err != nil {
			return nil, err
		}
		if m == nil {
			return nil, nil
		}
		return q.SetAssignmentStatus(ctx, m.RunID, m.TaskID, m.From, m.To, m.At)
	}
	agentSQL, agentArgs, err := sqlx.Named(updateAgent, a)
	if err != nil {
		return nil, err
	}
	execSQL, execArgs, err := sqlx.Named(updateExecution, e)
	if err != nil {
		return nil, err
	}
	slot := 0
	if a.Slot != nil {
		slot = *a.Slot
	}
	args := append(append([]any{a.RunID, slot, a.ID}, execArgs...), agentArgs...)
	with := `WITH s AS (UPDATE run_slots SET agent_id = NULL WHERE run_id = ? AND slot = ? AND agent_id = ?),
		x AS (` + execSQL + `)`
	if m == nil {
		_, err = q.execP(ctx, with+` `+agentSQL, args...)
		return nil, err
	}
	placeSQL, placeArgs := m.update()
	var p domain.WaveTaskAssignment
	if err := q.getP(ctx, &p, with+`, g AS (`+agentSQL+`) `+placeSQL, append(args, placeArgs...)...); err != nil {
		return nil, err
	}
	return &p, nil
}

// StartAgent writes what a claim starts: agent a, its execution e, and the
// task's place in the run moved from PENDING to IN_PROGRESS at now — one
// statement on PostgreSQL. ErrNotFound: the task has no PENDING place in
// the run, and the caller rolls back.
func (q RunQueries) StartAgent(ctx context.Context, a *domain.BuildAgent, e *domain.TaskExecution, now time.Time) error {
	insertAgent := `INSERT INTO build_agents (` + agentColumns + `) VALUES (` + namedList(agentColumns) + `)`
	insertExecution := `INSERT INTO task_executions (` + executionColumns + `) VALUES (` + namedList(executionColumns) + `)`
	const startPlace = `UPDATE wave_task_assignments SET task_status = ?, started_at = ?, completed_at = NULL
		WHERE run_id = ? AND task_id = ? AND task_status = ?`
	placeArgs := []any{domain.WaveInProgress, now, a.RunID, a.TaskID, domain.WavePending}
	if q.db.dialect != Postgres {
		if _, err := q.namedExecP(ctx, insertAgent, a); err != nil {
			return err
		}
		if _, err := q.namedExecP(ctx, insertExecution, e); err != nil {
			return err
		}
		n, err := q.execP(ctx, startPlace, placeArgs...)
		if err == nil && n == 0 {
			err = ErrNotFound
		}
		return err
	}
	agentSQL, agentArgs, err := sqlx.Named(insertAgent, a)
	if err != nil {
		return err
	}
	execSQL, execArgs, err := sqlx.Named(insertExecution, e)
	if err != nil {
		return err
	}
	// The execution refers to the agent: its key check runs at the end of
	// the statement, once both rows are in.
	args := append(append(agentArgs, execArgs...), placeArgs...)
	n, err := q.execP(ctx, `WITH a AS (`+agentSQL+`), e AS (`+execSQL+`) `+startPlace, args...)
	if err == nil && n == 0 {
		err = ErrNotFound
	}
	return err
}
