package store

import (
	"context"
	"errors"
	"strconv"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// The EAGER schedule's rows: a run's ordering constraints and conflicting
// pairs, fixed when it starts, and the claim that reads them.

// InsertRunDependencies records a run's ordering constraints.
func (q RunQueries) InsertRunDependencies(ctx context.Context, deps []domain.RunDependency) error {
	return insertBatches(ctx, q, "run_dependencies", "run_id, task_id, waits_on_task_id", deps)
}

// InsertRunConflicts records a run's conflicting pairs (each both ways).
func (q RunQueries) InsertRunConflicts(ctx context.Context, cs []domain.RunConflict) error {
	return insertBatches(ctx, q, "run_conflicts", "run_id, task_id, other_task_id", cs)
}

// EagerCandidate is a task an EAGER claim may take: its place's wave (read,
// not locked) and how many tasks it conflicts with.
type EagerCandidate struct {
	domain.Task
	Wave      domain.Wave `db:"wave"`
	Conflicts int         `db:"candidate_conflicts"`
}

// eagerReadyWhere is the condition on a run's place aliased a (task t) of
// a task an EAGER claim may take as far as one statement sees: PENDING, its
// dependencies in the run met (domain.EagerMetStatuses), none of its
// conflicting tasks busy (domain.EagerBusyStatuses); held says whether a
// PENDING blocking question must hold it back (true) or must not (false).
func eagerReadyWhere(runID string, held bool) (string, []any) {
	question := notHeldByQuestion
	if held {
		question = ` AND EXISTS (SELECT 1 FROM questions qu WHERE qu.task_id = t.id AND qu.status = ? AND qu.blocking)`
	}
	return `a.run_id = ? AND a.task_status = ? AND t.status = ?` + question + `
		AND NOT EXISTS (SELECT 1 FROM run_dependencies d JOIN wave_task_assignments b
			ON b.run_id = d.run_id AND b.task_id = d.waits_on_task_id
			WHERE d.run_id = a.run_id AND d.task_id = a.task_id AND b.task_status NOT IN (?))
		AND NOT EXISTS (SELECT 1 FROM run_conflicts c JOIN tasks o ON o.id = c.other_task_id
			WHERE c.run_id = a.run_id AND c.task_id = a.task_id AND o.status IN (?))`,
		[]any{runID, domain.WavePending, domain.StatusPending, domain.QuestionPending,
			domain.EagerMetStatuses, domain.EagerBusyStatuses}
}

// eagerWindow is how many of a run's pending places, in turn, an EAGER
// claim looks at first.
const eagerWindow = 256

// EagerCandidate picks, among the run's PENDING tasks not in skip, the first
// in turn (claim_rank) that an EAGER claim may take as far as this statement
// sees and that no PENDING blocking question holds back. It reads the run's
// pending places in turn (wave_task_assignments_claim_rank_idx) and stops at
// the first that qualifies: the first eagerWindow of them, then, only if
// none does, all. It comes with its wave, so the claim needs no other read
// of it. On PostgreSQL inside a transaction the task's row is
// locked, and a task another claimer holds is passed over (SKIP LOCKED);
// the caller then checks its conflicting tasks under their locks
// (ConflictingStatuses). ErrNotFound: none.
func (q RunQueries) EagerCandidate(ctx context.Context, runID string, skip []string) (*EagerCandidate, error) {
	lock := ""
	if q.db.dialect == Postgres && q.inTx {
		lock = " FOR NO KEY UPDATE OF t SKIP LOCKED"
	}
	where, args := eagerReadyWhere(runID, false)
	if len(skip) > 0 {
		where += ` AND t.id NOT IN (?)`
		args = append(args, skip)
	}
	pick := func(window string, windowArgs []any) (*EagerCandidate, error) {
		query, all := in(`SELECT t.*, `+prefixed("w", "wave", waveColumns)+`,
				(SELECT COUNT(*) FROM run_conflicts c WHERE c.run_id = a.run_id AND c.task_id = a.task_id) AS candidate_conflicts
			FROM (SELECT * FROM wave_task_assignments WHERE run_id = ? AND task_status = ? ORDER BY claim_rank`+window+`) a
			JOIN tasks t ON t.id = a.task_id JOIN execution_waves w ON w.id = a.wave_id
			WHERE `+where+` ORDER BY a.claim_rank LIMIT 1`+lock,
			append(windowArgs, args...)...)
		var c EagerCandidate
		run := q.get
		if len(skip) == 0 {
			run = q.getP
		}
		if err := run(ctx, &c, query, all...); err != nil {
			return nil, err
		}
		return &c, nil
	}
	c, err := pick(` LIMIT `+strconv.Itoa(eagerWindow), []any{runID, domain.WavePending})
	if errors.Is(err, ErrNotFound) {
		c, err = pick(``, []any{runID, domain.WavePending})
	}
	return c, err
}

// CountEagerCandidates counts the tasks EagerCandidate may pick, locked or
// not.
func (q RunQueries) CountEagerCandidates(ctx context.Context, runID string) (int, error) {
	where, args := eagerReadyWhere(runID, false)
	query, args := in(`SELECT COUNT(*) FROM wave_task_assignments a JOIN tasks t ON t.id = a.task_id WHERE `+where, args...)
	var n int
	err := q.get(ctx, &n, query, args...)
	return n, err
}

// EagerHeldByQuestions reports whether a PENDING blocking question holds
// back a task an EAGER claim could otherwise take.
func (q RunQueries) EagerHeldByQuestions(ctx context.Context, runID string) (bool, error) {
	where, args := eagerReadyWhere(runID, true)
	query, args := in(`SELECT COUNT(*) FROM wave_task_assignments a JOIN tasks t ON t.id = a.task_id WHERE `+where, args...)
	var n int
	err := q.get(ctx, &n, query, args...)
	return n > 0, err
}

// ConflictingStatuses locks, inside a PostgreSQL transaction, the rows of
// the tasks that conflict with taskID in the run and returns their
// statuses — read on the locked rows, so current. A row another transaction
// holds is passed over (SKIP LOCKED): the caller compares the count with
// the candidate's Conflicts and treats a missing one as busy. Claims never
// wait here, so two claims of conflicting tasks cannot deadlock: each holds
// its own candidate, so at most one of them sees the other free. A
// candidate without conflicting tasks (Conflicts 0) needs no such read.
func (q RunQueries) ConflictingStatuses(ctx context.Context, runID, taskID string) ([]domain.TaskStatus, error) {
	lock := ""
	if q.db.dialect == Postgres && q.inTx {
		lock = " FOR NO KEY UPDATE OF t SKIP LOCKED"
	}
	var out []domain.TaskStatus
	err := q.selectx(ctx, &out, `SELECT t.status FROM run_conflicts c JOIN tasks t ON t.id = c.other_task_id
		WHERE c.run_id = ? AND c.task_id = ?`+lock, runID, taskID)
	return out, err
}
