package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/taskgraph/taskgraph/internal/domain"
)

const (
	runColumns = `id, task_list_id, project_id, run_number, status, triggered_by, triggered_reason, retry_of_run_id,
	max_parallel_agents, schedule, tasks_total, tasks_completed, tasks_failed, tasks_skipped, tasks_blocked, waves_total,
	waves_completed, current_wave, agents_spawned, agents_active, max_parallel_reached, started_at, completed_at,
	duration_ms, failure_reason, last_error, created_by, created_at, updated_at`
	waveColumns = `id, run_id, task_list_id, wave_number, status, task_count, completed_count, failed_count,
	skipped_count, started_at, completed_at, duration_ms, created_at`
	assignmentColumns = `id, wave_id, run_id, task_id, position, task_status, assigned_at, started_at, completed_at,
	claim_rank`
	agentColumns = `id, run_id, wave_id, task_id, task_list_id, process_id, hostname, working_directory, status,
	last_heartbeat_at, heartbeat_count, consecutive_missed_heartbeats, progress_percent, current_step, memory_mb,
	cpu_percent, spawned_at, terminated_at, termination_reason, error_message, claimed_by, slot, end_reason,
	tasks_completed, tasks_failed, total_duration_ms`
	heartbeatColumns = `id, agent_id, run_id, task_id, status, progress_percent, current_step, memory_mb, cpu_percent,
	recorded_at`
	executionColumns = `id, task_id, task_list_id, run_id, agent_id, wave_id, attempt_number, status, started_at,
	ended_at, duration_ms, last_error, files_modified, git_commits, log_lines, created_at`
	testResultColumns = `id, task_id, task_list_id, run_id, execution_id, agent_id, test_level, test_index, test_name,
	status, output, error, duration_ms, executed_by, executed_at`
)

func (q RunQueries) insert(ctx context.Context, table, cols string, rows any) error {
	_, err := q.namedExec(ctx, `INSERT INTO `+table+` (`+cols+`) VALUES (`+namedList(cols)+`)`, rows)
	return err
}

// insertBatches inserts rows in statements of at most 1,000 rows: a run of
// thousands of tasks stays under both databases' limits on parameters.
func insertBatches[T any](ctx context.Context, q RunQueries, table, cols string, rows []T) error {
	const batch = 1000
	for start := 0; start < len(rows); start += batch {
		if err := q.insert(ctx, table, cols, rows[start:min(start+batch, len(rows))]); err != nil {
			return err
		}
	}
	return nil
}

// InsertRun inserts an execution run.
func (q RunQueries) InsertRun(ctx context.Context, r *domain.ExecutionRun) error {
	return q.insert(ctx, "execution_runs", runColumns, r)
}

// UpdateRun writes a run's status and times (counters: SealRunCounters).
func (q RunQueries) UpdateRun(ctx context.Context, r *domain.ExecutionRun) error {
	_, err := q.namedExec(ctx, `UPDATE execution_runs SET status = :status, current_wave = :current_wave,
		started_at = :started_at, completed_at = :completed_at, duration_ms = :duration_ms,
		failure_reason = :failure_reason, last_error = :last_error, updated_at = :updated_at WHERE id = :id`, r)
	return err
}

// An active run's counters are not kept on its row, which every claim and
// completion would then queue on: they are read from the rows that move
// with each claim and outcome — the waves' counters (tasks completed, failed
// and skipped, waves over), the slots (agents spawned and live, the highest
// slot ever taken) and the list's BLOCKED tasks of the run. tasks_total and
// waves_total are fixed when the run starts. SealRunCounters writes the same
// values into the row when the run ends, and a finished run is read from its
// row.

// runCounter is the live expression of one counter of the run aliased r.
func (q RunQueries) runCounters() []struct{ col, expr string } {
	greatest := "GREATEST" // SQLite's two-argument MAX is PostgreSQL's GREATEST
	if q.db.dialect == SQLite {
		greatest = "MAX"
	}
	return []struct{ col, expr string }{
		{"tasks_completed", `(SELECT COALESCE(SUM(w.completed_count), 0) FROM execution_waves w WHERE w.run_id = r.id)`},
		{"tasks_failed", `(SELECT COALESCE(SUM(w.failed_count), 0) FROM execution_waves w WHERE w.run_id = r.id)`},
		{"tasks_skipped", `(SELECT COALESCE(SUM(w.skipped_count), 0) FROM execution_waves w WHERE w.run_id = r.id)`},
		{"tasks_blocked", `(SELECT COUNT(*) FROM tasks t JOIN wave_task_assignments a ON a.task_id = t.id AND a.run_id = r.id
			WHERE t.task_list_id = r.task_list_id AND t.status = '` + string(domain.StatusBlocked) + `')`},
		{"waves_completed", `(SELECT COUNT(*) FROM execution_waves w WHERE w.run_id = r.id AND w.status IN (` +
			sqlList(domain.FinishedWaveStatuses) + `))`},
		{"agents_spawned", `(SELECT COALESCE(SUM(s.claims), 0) FROM run_slots s WHERE s.run_id = r.id)`},
		{"agents_active", `(SELECT COUNT(*) FROM run_slots s WHERE s.run_id = r.id AND s.agent_id IS NOT NULL)`},
		{"max_parallel_reached", greatest + `(r.max_parallel_reached,
			(SELECT COALESCE(MAX(s.slot), 0) FROM run_slots s WHERE s.run_id = r.id AND s.claims > 0))`},
	}
}

// sqlList spells statuses as SQL string literals (the domain's own values,
// never client input), for expressions that sit in a select list.
func sqlList[S ~string](statuses []S) string {
	parts := make([]string, len(statuses))
	for i, s := range statuses {
		parts[i] = "'" + string(s) + "'"
	}
	return strings.Join(parts, ", ")
}

// runSelect selects runs aliased r with their counters: live for an active
// run, as sealed for a finished one.
func (q RunQueries) runSelect() string {
	cols := strings.Fields(strings.NewReplacer(",", " ").Replace(runColumns))
	live := map[string]string{}
	for _, c := range q.runCounters() {
		live[c.col] = c.expr
	}
	active := sqlList(domain.ActiveRunStatuses)
	for i, c := range cols {
		if expr, ok := live[c]; ok {
			cols[i] = `CASE WHEN r.status IN (` + active + `) THEN ` + expr + ` ELSE r.` + c + ` END AS ` + c
		} else {
			cols[i] = "r." + c
		}
	}
	return `SELECT ` + strings.Join(cols, ", ") + ` FROM execution_runs r`
}

func (q RunQueries) runs(ctx context.Context, where string, args ...any) ([]*domain.ExecutionRun, error) {
	query, args := in(q.runSelect()+` WHERE `+where, args...)
	var out []*domain.ExecutionRun
	if err := q.selectx(ctx, &out, query, args...); err != nil {
		return nil, err
	}
	return out, nil
}

func (q RunQueries) oneRun(ctx context.Context, where string, args ...any) (*domain.ExecutionRun, error) {
	runs, err := q.runs(ctx, where, args...)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, ErrNotFound
	}
	return runs[0], nil
}

// RunForUpdate loads a run and, inside a PostgreSQL transaction, locks it.
func (q RunQueries) RunForUpdate(ctx context.Context, id string) (*domain.ExecutionRun, error) {
	lock := ""
	if q.db.dialect == Postgres && q.inTx {
		lock = " FOR NO KEY UPDATE OF r"
	}
	return q.oneRun(ctx, `r.id = ?`+lock, id)
}

// RunRow loads a run's own row without locking it and without its live
// counters (those of an active run read as stored: stale). For the agent
// protocol's hot paths, which need the run's status, schedule and limits only
// and never show the run.
func (q RunQueries) RunRow(ctx context.Context, id string) (*domain.ExecutionRun, error) {
	var r domain.ExecutionRun
	if err := q.getP(ctx, &r, `SELECT * FROM execution_runs WHERE id = ?`, id); err != nil {
		return nil, err
	}
	return &r, nil
}

// RunsByIDs loads runs by id.
func (q RunQueries) RunsByIDs(ctx context.Context, ids []string) ([]*domain.ExecutionRun, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return q.runs(ctx, `r.id IN (?) ORDER BY r.id`, ids)
}

// ActiveRunOfList is the list's run in domain.ActiveRunStatuses, if any.
func (q RunQueries) ActiveRunOfList(ctx context.Context, listID string) (*domain.ExecutionRun, error) {
	return q.oneRun(ctx, `r.task_list_id = ? AND r.status IN (?)`, listID, domain.ActiveRunStatuses)
}

// OpenRunOfTask is the unfinished run in which the task's place is still open
// (its assignment PENDING or IN_PROGRESS), if any.
func (q RunQueries) OpenRunOfTask(ctx context.Context, taskID string) (*domain.ExecutionRun, error) {
	return q.oneRun(ctx, `r.status IN (?) AND r.id IN (SELECT a.run_id FROM wave_task_assignments a
		WHERE a.task_id = ? AND a.task_status IN (?)) LIMIT 1`, domain.ActiveRunStatuses, taskID, domain.OpenWaveStatuses)
}

// NextRunNumber is the number of a list's next run.
func (q RunQueries) NextRunNumber(ctx context.Context, listID string) (int, error) {
	var n int
	err := q.get(ctx, &n, `SELECT COALESCE(MAX(run_number), 0) + 1 FROM execution_runs WHERE task_list_id = ?`, listID)
	return n, err
}

// SealRunCounters writes the live counters of a run that ends into its row
// and reads the whole row back into run, so the caller answers with what is
// stored. The caller holds the run's lock.
func (q RunQueries) SealRunCounters(ctx context.Context, run *domain.ExecutionRun, now time.Time) error {
	var sets []string
	for _, c := range q.runCounters() {
		sets = append(sets, c.col+" = "+c.expr)
	}
	if _, err := q.exec(ctx, `UPDATE execution_runs AS r SET `+strings.Join(sets, ", ")+`, updated_at = ? WHERE r.id = ?`,
		now, run.ID); err != nil {
		return err
	}
	sealed, err := q.RunRow(ctx, run.ID)
	if err != nil {
		return err
	}
	*run = *sealed
	return nil
}

// Reload reads run again with its counters (live while it is active), so a
// mutation answers with the run as it now stands.
func (q RunQueries) Reload(ctx context.Context, run *domain.ExecutionRun) error {
	r, err := q.oneRun(ctx, `r.id = ?`, run.ID)
	if err != nil {
		return err
	}
	*run = *r
	return nil
}

// ClaimableTask picks the PENDING task of a wave of run (of list) with the
// highest priority score (ties by display id) and locks it; on PostgreSQL a
// task another claimer holds locked is passed over (SKIP LOCKED), and so is
// a task that a PENDING blocking question holds back. It looks at the
// list's best claimWindow PENDING tasks first, in order — an ordered index
// scan (tasks_task_list_id_status_idx) — so a claim costs the same in a wave
// of 10 tasks as in one of 10,000; only when none of those qualifies does it look at every PENDING
// task of the wave. ErrNotFound: none.
func (q RunQueries) ClaimableTask(ctx context.Context, listID, runID, waveID string) (*domain.Task, error) {
	lock := ""
	if q.db.dialect == Postgres && q.inTx {
		lock = " FOR NO KEY UPDATE OF t SKIP LOCKED"
	}
	qualifies := `t.status = ? AND EXISTS (SELECT 1 FROM wave_task_assignments a WHERE a.run_id = ? AND a.task_id = t.id
		AND a.wave_id = ? AND a.task_status = ?)` + notHeldByQuestion
	args := []any{domain.StatusPending, runID, waveID, domain.WavePending, domain.QuestionPending}
	var t domain.Task
	// The window is a subquery with its own order and limit: the planner
	// keeps it apart (no statistics turn it into a sort of the whole run)
	// and knows its rows come in order, so it reads them one at a time and
	// stops at the first that qualifies.
	err := q.getP(ctx, &t, `SELECT t.* FROM (SELECT id, priority_score, display_id FROM tasks
			WHERE task_list_id = ? AND status = ? ORDER BY priority_score DESC, display_id LIMIT `+strconv.Itoa(claimWindow)+`) c
		JOIN tasks t ON t.id = c.id WHERE `+qualifies+`
		ORDER BY c.priority_score DESC, c.display_id LIMIT 1`+lock,
		append([]any{listID, domain.StatusPending}, args...)...)
	if errors.Is(err, ErrNotFound) {
		err = q.get(ctx, &t, `SELECT t.* FROM wave_task_assignments w JOIN tasks t ON t.id = w.task_id
			WHERE w.wave_id = ? AND w.task_status = ? AND `+qualifies+`
			ORDER BY t.priority_score DESC, t.display_id LIMIT 1`+lock,
			append([]any{waveID, domain.WavePending}, args...)...)
	}
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// CountClaimable counts the tasks ClaimableTask may pick, locked or not.
func (q RunQueries) CountClaimable(ctx context.Context, waveID string) (int, error) {
	var n int
	err := q.get(ctx, &n, `SELECT COUNT(*) FROM wave_task_assignments a JOIN tasks t ON t.id = a.task_id
		WHERE a.wave_id = ? AND a.task_status = ? AND t.status = ?`+notHeldByQuestion,
		waveID, domain.WavePending, domain.StatusPending, domain.QuestionPending)
	return n, err
}

// AgentForUpdate loads an agent and, inside a PostgreSQL transaction, locks it.
func (q RunQueries) AgentForUpdate(ctx context.Context, id string) (*domain.BuildAgent, error) {
	var a domain.BuildAgent
	if err := q.getP(ctx, &a, `SELECT * FROM build_agents WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &a, nil
}

// LiveAgentForSweep locks a live agent unless another transaction holds it
// (SKIP LOCKED on PostgreSQL). ErrNotFound: terminated, gone or held.
func (q RunQueries) LiveAgentForSweep(ctx context.Context, id string) (*domain.BuildAgent, error) {
	var a domain.BuildAgent
	if err := q.get(ctx, &a, `SELECT * FROM build_agents WHERE id = ? AND status <> ?`+q.skipLocked(), id, domain.AgentTerminated); err != nil {
		return nil, err
	}
	return &a, nil
}

// AgentsByIDs loads agents by id.
func (q RunQueries) AgentsByIDs(ctx context.Context, ids []string) ([]*domain.BuildAgent, error) {
	return byIDs[domain.BuildAgent](ctx, q.Q, "build_agents", ids)
}

// AgentsOfRun lists a run's agents in spawn order.
func (q RunQueries) AgentsOfRun(ctx context.Context, runID string) ([]*domain.BuildAgent, error) {
	var out []*domain.BuildAgent
	err := q.selectx(ctx, &out, `SELECT * FROM build_agents WHERE run_id = ? ORDER BY spawned_at, id`, runID)
	return out, err
}

// UpdateAgent writes an agent's mutable columns.
func (q RunQueries) UpdateAgent(ctx context.Context, a *domain.BuildAgent) error {
	_, err := q.namedExecP(ctx, `UPDATE build_agents SET status = :status, last_heartbeat_at = :last_heartbeat_at,
		heartbeat_count = :heartbeat_count, progress_percent = :progress_percent, current_step = :current_step,
		memory_mb = :memory_mb, cpu_percent = :cpu_percent, terminated_at = :terminated_at,
		termination_reason = :termination_reason, error_message = :error_message,
		consecutive_missed_heartbeats = :consecutive_missed_heartbeats, end_reason = :end_reason,
		tasks_completed = :tasks_completed, tasks_failed = :tasks_failed, total_duration_ms = :total_duration_ms
		WHERE id = :id`, a)
	return err
}

// InsertHeartbeat records a heartbeat.
func (q RunQueries) InsertHeartbeat(ctx context.Context, h *domain.AgentHeartbeat) error {
	return q.insert(ctx, "agent_heartbeats", heartbeatColumns, h)
}

// ExecutionOfAgent is the execution an agent runs.
func (q RunQueries) ExecutionOfAgent(ctx context.Context, agentID string) (*domain.TaskExecution, error) {
	var e domain.TaskExecution
	if err := q.getP(ctx, &e, `SELECT * FROM task_executions WHERE agent_id = ?`, agentID); err != nil {
		return nil, err
	}
	return &e, nil
}

// ExecutionsByIDs loads executions by id.
func (q RunQueries) ExecutionsByIDs(ctx context.Context, ids []string) ([]*domain.TaskExecution, error) {
	return byIDs[domain.TaskExecution](ctx, q.Q, "task_executions", ids)
}

// ExecutionsOfTask lists a task's executions in start order.
func (q RunQueries) ExecutionsOfTask(ctx context.Context, taskID string) ([]*domain.TaskExecution, error) {
	var out []*domain.TaskExecution
	err := q.selectx(ctx, &out, `SELECT * FROM task_executions WHERE task_id = ? ORDER BY started_at, id`, taskID)
	return out, err
}

// CountAttempts counts a task's executions in a run.
func (q RunQueries) CountAttempts(ctx context.Context, runID, taskID string) (int, error) {
	var n int
	err := q.getP(ctx, &n, `SELECT COUNT(*) FROM task_executions WHERE run_id = ? AND task_id = ?`, runID, taskID)
	return n, err
}

// UpdateExecution writes an execution's outcome.
func (q RunQueries) UpdateExecution(ctx context.Context, e *domain.TaskExecution) error {
	_, err := q.namedExecP(ctx, `UPDATE task_executions SET status = :status, ended_at = :ended_at,
		duration_ms = :duration_ms, last_error = :last_error, files_modified = :files_modified,
		git_commits = :git_commits WHERE id = :id`, e)
	return err
}

// AppendLogLines appends lines to an execution's log (numbered from its
// current count) and returns the new count.
func (q RunQueries) AppendLogLines(ctx context.Context, executionID string, from int, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	type row struct {
		ExecutionID string `db:"execution_id"`
		LineNo      int    `db:"line_no"`
		Line        string `db:"line"`
	}
	const batch = 500
	for start := 0; start < len(lines); start += batch {
		end := min(start+batch, len(lines))
		rows := make([]row, 0, end-start)
		for i := start; i < end; i++ {
			rows = append(rows, row{executionID, from + i + 1, lines[i]})
		}
		if err := q.insert(ctx, "task_execution_log_lines", "execution_id, line_no, line", rows); err != nil {
			return err
		}
	}
	_, err := q.exec(ctx, `UPDATE task_executions SET log_lines = ? WHERE id = ?`, from+len(lines), executionID)
	return err
}

// LogTail returns the last n lines of an execution's log, in order, reading
// only those rows.
func (q RunQueries) LogTail(ctx context.Context, executionID string, n int) ([]string, error) {
	var out []string
	err := q.selectx(ctx, &out, `SELECT line FROM (SELECT line_no, line FROM task_execution_log_lines
		WHERE execution_id = ? ORDER BY line_no DESC LIMIT `+strconv.Itoa(n)+`) tail ORDER BY line_no`, executionID)
	return out, err
}

// InsertTestResult records a test result.
func (q RunQueries) InsertTestResult(ctx context.Context, r *domain.TaskTestResult) error {
	return q.insert(ctx, "task_test_results", testResultColumns, r)
}

// TestResultsOfExecution lists an execution's test results in record order.
func (q RunQueries) TestResultsOfExecution(ctx context.Context, executionID string) ([]*domain.TaskTestResult, error) {
	var out []*domain.TaskTestResult
	err := q.selectP(ctx, &out, `SELECT * FROM task_test_results WHERE execution_id = ? ORDER BY executed_at, id`, executionID)
	return out, err
}

// MarkImpactAccuracy stamps file impacts (a task's, at most a few hundred)
// as accurate or not, with the time they were validated.
func (q RunQueries) MarkImpactAccuracy(ctx context.Context, accurate, inaccurate []string, now time.Time) error {
	for _, set := range []struct {
		ids []string
		was bool
	}{{accurate, true}, {inaccurate, false}} {
		if len(set.ids) == 0 {
			continue
		}
		query, args := in(`UPDATE task_file_impacts SET was_accurate = ?, validated_at = ? WHERE id IN (?)`, set.was, now, set.ids)
		if _, err := q.exec(ctx, query, args...); err != nil {
			return err
		}
	}
	return nil
}

// SetAssignedAgent records which agent holds a task.
func (q RunQueries) SetAssignedAgent(ctx context.Context, taskID string, agentID *string) error {
	_, err := q.exec(ctx, `UPDATE tasks SET assigned_agent = ? WHERE id = ?`, agentID, taskID)
	return err
}

// LateAgent is a live agent that has missed at least one heartbeat: its
// last heartbeat, its heartbeat count (which a heartbeat moves) and the
// misses recorded so far.
type LateAgent struct {
	ID       string    `db:"id"`
	Last     time.Time `db:"last_heartbeat_at"`
	Count    int       `db:"heartbeat_count"`
	Missed   int       `db:"consecutive_missed_heartbeats"`
	Silence  time.Duration
	Database time.Time
}

// LateAgents lists up to limit live agents whose last heartbeat is older
// than interval by the database clock, oldest first, each with its silence.
// On PostgreSQL silence counts from the database's start when that is later:
// while it was down (a restart, a crash) no agent could heartbeat.
// It is background maintenance (the heartbeat sweep), so its statements are
// not counted in Statements(): they would make request statement counts
// depend on timing.
func (d *DB) LateAgents(ctx context.Context, interval time.Duration, limit int) ([]LateAgent, error) {
	var now, start time.Time
	if d.dialect == SQLite {
		now = time.Now().UTC()
	} else {
		var clock struct {
			Now   time.Time `db:"now"`
			Start time.Time `db:"start"`
		}
		if err := sqlx.GetContext(ctx, d.sqlx, &clock, `SELECT clock_timestamp() AS now, pg_postmaster_start_time() AS start`); err != nil {
			return nil, mapErr(err)
		}
		now, start = clock.Now, clock.Start
	}
	var rows []LateAgent
	if err := sqlx.SelectContext(ctx, d.sqlx, &rows, d.sqlx.Rebind(`SELECT id, last_heartbeat_at, heartbeat_count,
		consecutive_missed_heartbeats FROM build_agents
		WHERE status <> ? ORDER BY last_heartbeat_at LIMIT `+strconv.Itoa(limit)), domain.AgentTerminated); err != nil {
		return nil, mapErr(err)
	}
	cutoff := now.Add(-interval)
	var out []LateAgent
	for _, r := range rows {
		if !r.Last.Before(cutoff) {
			break
		}
		since := r.Last
		if start.After(since) {
			since = start
		}
		if !since.Before(cutoff) {
			continue // late only by the database's downtime
		}
		r.Silence, r.Database = now.Sub(since), now
		out = append(out, r)
	}
	return out, nil
}

// MarkMissedHeartbeats records that a live agent has missed n heartbeats in
// a row, unless it heartbeated since its heartbeat count was read (count).
// Background maintenance, as LateAgents: not counted in Statements().
func (d *DB) MarkMissedHeartbeats(ctx context.Context, id string, count, n int) error {
	_, err := d.sqlx.ExecContext(ctx, d.sqlx.Rebind(`UPDATE build_agents SET consecutive_missed_heartbeats = ?
		WHERE id = ? AND heartbeat_count = ? AND status <> ?`), n, id, count, domain.AgentTerminated)
	return mapErr(err)
}

// Batched reads of the children of many parents, for the request loaders: one
// statement for every parent of a level.

// RunsOfLists lists the runs of lists, newest first.
func (q RunQueries) RunsOfLists(ctx context.Context, listIDs []string) ([]*domain.ExecutionRun, error) {
	return byColumn[domain.ExecutionRun](ctx, q.Q, "execution_runs", "task_list_id", listIDs, "run_number DESC")
}

// WavesOfRuns lists the waves of runs in order.
func (q RunQueries) WavesOfRuns(ctx context.Context, runIDs []string) ([]*domain.Wave, error) {
	return byColumn[domain.Wave](ctx, q.Q, "execution_waves", "run_id", runIDs, "wave_number")
}

// AssignmentsByIDs loads wave assignments by id.
func (q RunQueries) AssignmentsByIDs(ctx context.Context, ids []string) ([]*domain.WaveTaskAssignment, error) {
	return byIDs[domain.WaveTaskAssignment](ctx, q.Q, "wave_task_assignments", ids)
}

// TestResultsByIDs loads test results by id.
func (q RunQueries) TestResultsByIDs(ctx context.Context, ids []string) ([]*domain.TaskTestResult, error) {
	return byIDs[domain.TaskTestResult](ctx, q.Q, "task_test_results", ids)
}

// AssignmentsOfWaves lists the assignments of waves in position order.
func (q RunQueries) AssignmentsOfWaves(ctx context.Context, waveIDs []string) ([]*domain.WaveTaskAssignment, error) {
	return byColumn[domain.WaveTaskAssignment](ctx, q.Q, "wave_task_assignments", "wave_id", waveIDs, "position")
}

// AgentsOfRuns lists the agents of runs in spawn order.
func (q RunQueries) AgentsOfRuns(ctx context.Context, runIDs []string) ([]*domain.BuildAgent, error) {
	return byColumn[domain.BuildAgent](ctx, q.Q, "build_agents", "run_id", runIDs, "spawned_at, id")
}

// ExecutionsOfRuns lists the executions of runs in start order.
func (q RunQueries) ExecutionsOfRuns(ctx context.Context, runIDs []string) ([]*domain.TaskExecution, error) {
	return byColumn[domain.TaskExecution](ctx, q.Q, "task_executions", "run_id", runIDs, "started_at, id")
}

// TestResultsOfExecutions lists the test results of executions in run order.
func (q RunQueries) TestResultsOfExecutions(ctx context.Context, executionIDs []string) ([]*domain.TaskTestResult, error) {
	return byColumn[domain.TaskTestResult](ctx, q.Q, "task_test_results", "execution_id", executionIDs, "executed_at, id")
}

// ExecutionsOfAgents loads the executions of agents (one each: 1 agent = 1 task).
func (q RunQueries) ExecutionsOfAgents(ctx context.Context, agentIDs []string) ([]*domain.TaskExecution, error) {
	return byColumn[domain.TaskExecution](ctx, q.Q, "task_executions", "agent_id", agentIDs, "id")
}
