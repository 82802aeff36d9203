package store

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// A run's waves and the places of its tasks in them (assignments).

// InsertWaves inserts waves.
func (q RunQueries) InsertWaves(ctx context.Context, ws []*domain.Wave) error {
	return insertBatches(ctx, q, "execution_waves", waveColumns, ws)
}

// InsertAssignments inserts wave assignments.
func (q RunQueries) InsertAssignments(ctx context.Context, as []*domain.WaveTaskAssignment) error {
	return insertBatches(ctx, q, "wave_task_assignments", assignmentColumns, as)
}

// WavesOfRun lists a run's waves in order.
func (q RunQueries) WavesOfRun(ctx context.Context, runID string) ([]*domain.Wave, error) {
	var out []*domain.Wave
	err := q.selectP(ctx, &out, `SELECT * FROM execution_waves WHERE run_id = ? ORDER BY wave_number`, runID)
	return out, err
}

// WaveOfRun loads a run's wave by number.
func (q RunQueries) WaveOfRun(ctx context.Context, runID string, number int) (*domain.Wave, error) {
	var w domain.Wave
	if err := q.getP(ctx, &w, `SELECT * FROM execution_waves WHERE run_id = ? AND wave_number = ?`, runID, number); err != nil {
		return nil, err
	}
	return &w, nil
}

// WavesByIDs loads waves by id.
func (q RunQueries) WavesByIDs(ctx context.Context, ids []string) ([]*domain.Wave, error) {
	return byIDs[domain.Wave](ctx, q.Q, "execution_waves", ids)
}

// UpdateWaveStatus writes a wave's status and times. Its counters move only
// through AddWaveCounts.
func (q RunQueries) UpdateWaveStatus(ctx context.Context, w *domain.Wave) error {
	_, err := q.namedExec(ctx, `UPDATE execution_waves SET status = :status, started_at = :started_at,
		completed_at = :completed_at, duration_ms = :duration_ms WHERE id = :id`, w)
	return err
}

// AddWaveCounts adds to a wave's counters of completed, failed and skipped
// tasks and returns the wave as it now stands. The caller holds the run's
// project's event sequence, as every writer of the run's waves does, so the
// one whose task closes the wave sees it closed.
func (q RunQueries) AddWaveCounts(ctx context.Context, waveID string, completed, failed, skipped int) (*domain.Wave, error) {
	var w domain.Wave
	if err := q.get(ctx, &w, `UPDATE execution_waves SET completed_count = completed_count + ?,
		failed_count = failed_count + ?, skipped_count = skipped_count + ? WHERE id = ? RETURNING *`,
		completed, failed, skipped, waveID); err != nil {
		return nil, err
	}
	return &w, nil
}

// StartWave moves a PENDING wave to IN_PROGRESS at now and reports whether
// it did (false: it had started already).
func (q RunQueries) StartWave(ctx context.Context, waveID string, now time.Time) (bool, error) {
	res, err := q.exec(ctx, `UPDATE execution_waves SET status = ?, started_at = ? WHERE id = ? AND status = ?`,
		domain.WaveInProgress, now, waveID, domain.WavePending)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// AssignmentsOfRun lists a run's assignments by wave and position.
func (q RunQueries) AssignmentsOfRun(ctx context.Context, runID string) ([]*domain.WaveTaskAssignment, error) {
	var out []*domain.WaveTaskAssignment
	err := q.selectx(ctx, &out, `SELECT a.* FROM wave_task_assignments a JOIN execution_waves w ON w.id = a.wave_id
		WHERE a.run_id = ? ORDER BY w.wave_number, a.position`, runID)
	return out, err
}

// SetAssignmentStatus moves a task's assignment in a run from one of the
// statuses from to st and returns it as it now is (ErrNotFound: the task has
// no place in the run in one of those statuses, and nothing moved).
func (q RunQueries) SetAssignmentStatus(ctx context.Context, runID, taskID string, from []domain.WaveStatus, st domain.WaveStatus,
	now time.Time,
) (*domain.WaveTaskAssignment, error) {
	query, args := PlaceMove{RunID: runID, TaskID: taskID, From: from, To: st, At: now}.update()
	var a domain.WaveTaskAssignment
	if err := q.getP(ctx, &a, query, args...); err != nil {
		return nil, err
	}
	return &a, nil
}

// PlaceMove moves a task's place in a run from one of the statuses From to
// To at At (SetAssignmentStatus).
type PlaceMove struct {
	RunID, TaskID string
	From          []domain.WaveStatus
	To            domain.WaveStatus
	At            time.Time
}

// update is m's statement, returning the place as it now is.
func (m PlaceMove) update() (string, []any) {
	set := `UPDATE wave_task_assignments SET task_status = ?`
	args := []any{m.To}
	switch m.To {
	case domain.WaveInProgress:
		set += `, started_at = ?, completed_at = NULL`
		args = append(args, m.At)
	case domain.WavePending:
		set += `, completed_at = NULL`
	default:
		set += `, completed_at = ?`
		args = append(args, m.At)
	}
	return in(set+` WHERE run_id = ? AND task_id = ? AND task_status IN (?) RETURNING *`,
		append(args, m.RunID, m.TaskID, m.From)...)
}

// claimWindow is how many of a list's best PENDING tasks a WAVES claim
// looks at first: more than the claims that can be in flight at once hold.
const claimWindow = 128
