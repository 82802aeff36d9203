package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// The tail of a transaction: what it writes last, under its project's event
// sequence. Numbering the events takes the sequence, which the transaction
// then holds until it commits; the rows that every transaction of a busy
// project writes — a list's counters, a run's wave counters — are written
// under it, where their writers take turns and never wait for one another.
// On PostgreSQL the whole tail of a project is one statement, so the
// sequence is held for that statement and the commit only.

// ListDelta is a change of a list's counters of completed and failed tasks.
type ListDelta struct {
	ListID            string
	Completed, Failed int
	At                time.Time
}

// WaveDelta is a change of a wave's counters of completed, failed and
// skipped tasks.
type WaveDelta struct {
	WaveID                     string
	Completed, Failed, Skipped int
}

// WaveCounts is a wave's counters as a tail left them.
type WaveCounts struct {
	ID             string            `db:"wave_id"`
	Status         domain.WaveStatus `db:"wave_status"`
	TaskCount      int               `db:"task_count"`
	CompletedCount int               `db:"completed_count"`
	FailedCount    int               `db:"failed_count"`
	SkippedCount   int               `db:"skipped_count"`
}

// Wave is the wave the counters are of (its counters and status only).
func (c WaveCounts) Wave() *domain.Wave {
	return &domain.Wave{ID: c.ID, Status: c.Status, TaskCount: c.TaskCount, CompletedCount: c.CompletedCount,
		FailedCount: c.FailedCount, SkippedCount: c.SkippedCount}
}

// AppendTail writes the tail of a transaction for one project: it numbers
// and inserts evs (the project's events, in order; possibly none), adds
// lists to the lists' counters and waves to the waves' counters, all under
// the project's event sequence, and returns the waves' counters as they now
// stand. With nowait, on PostgreSQL, a list row that another transaction
// holds (one that locked it before taking the sequence) is not waited for:
// ErrBusy, and the transaction is over. A project without events yet has no
// sequence: its waves have no other writer.
//
// With commit, the tail is the transaction's last statement: on PostgreSQL
// it commits the transaction in the same round trip (see tailPostgres);
// elsewhere it is ignored and the transaction commits as usual.
func (q *Q) AppendTail(ctx context.Context, projectID string, evs []*domain.Event, lists []ListDelta, nowait bool,
	waves []WaveDelta, commit bool,
) ([]WaveCounts, error) {
	if q.db.dialect == Postgres && len(evs) > 0 && len(evs) <= eventBatch {
		return q.tailPostgres(ctx, projectID, evs, lists, nowait, waves, commit && q.inTx)
	}
	if len(evs) > 0 {
		if err := q.Events.AppendEvents(ctx, evs); err != nil {
			return nil, err
		}
	} else if len(waves) > 0 {
		if err := q.Events.HoldSequence(ctx, projectID); err != nil {
			return nil, err
		}
	}
	for _, l := range lists {
		if err := q.Lists.AddListCounts(ctx, l.ListID, l.Completed, l.Failed, l.At, nowait); err != nil {
			return nil, err
		}
	}
	out := make([]WaveCounts, 0, len(waves))
	for _, w := range waves {
		var c WaveCounts
		if err := q.get(ctx, &c, `UPDATE execution_waves SET completed_count = completed_count + ?,
			failed_count = failed_count + ?, skipped_count = skipped_count + ? WHERE id = ?
			RETURNING id AS wave_id, status AS wave_status, task_count, completed_count, failed_count, skipped_count`,
			w.Completed, w.Failed, w.Skipped, w.WaveID); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// tailPostgres is AppendTail in one statement: the sequence's upsert first
// (every other part reads its row, so no row of the tail is locked before
// it), the events, the lists (locked NOWAIT when asked), the waves.
//
// With commit it is sent as one simple query with COMMIT after it (its
// arguments written in as literals: a simple query takes no parameters),
// so the sequence is held for that one round trip only — PostgreSQL
// releases it as it commits, without waiting for this process to read the
// tail's answer and send COMMIT, which on a busy machine is most of the
// time a project's transactions queue for. The driver's transaction ends
// with it (lazy_begin.go). A statement that fails skips the rest, so the
// transaction is rolled back as after any failed statement.
func (q *Q) tailPostgres(ctx context.Context, projectID string, evs []*domain.Event, lists []ListDelta, nowait bool,
	waves []WaveDelta, commit bool,
) ([]WaveCounts, error) {
	q.noteEvents(evs)
	var b strings.Builder
	args := []any{projectID, len(evs), projectID}
	b.WriteString(`WITH s AS (INSERT INTO event_sequences (project_id, last_seq) VALUES (?, ?)
		ON CONFLICT (project_id) DO UPDATE SET last_seq = event_sequences.last_seq + excluded.last_seq
		RETURNING last_seq),
	e AS (INSERT INTO events (project_id, seq, run_id, task_id, agent_id, session_id, type, payload, occurred_at)
		SELECT CAST(? AS UUID), s.last_seq - v.back, v.run_id, v.task_id, v.agent_id, v.session_id, v.type, v.payload,
			v.occurred_at FROM s, (VALUES `)
	for i, e := range evs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`(CAST(? AS BIGINT), CAST(? AS UUID), CAST(? AS UUID), CAST(? AS UUID), CAST(? AS UUID),
			CAST(? AS TEXT), CAST(? AS JSONB), CAST(? AS TIMESTAMPTZ))`)
		args = append(args, len(evs)-1-i, e.RunID, e.TaskID, e.AgentID, e.SessionID, e.Type, e.Payload, e.OccurredAt)
	}
	b.WriteString(`) AS v (back, run_id, task_id, agent_id, session_id, type, payload, occurred_at))`)
	lock := " FOR NO KEY UPDATE OF t"
	if nowait {
		lock += " NOWAIT"
	}
	lists = slices.Clone(lists)
	slices.SortFunc(lists, func(a, b ListDelta) int { return strings.Compare(a.ListID, b.ListID) })
	for i, l := range lists {
		fmt.Fprintf(&b, `, l%d AS (UPDATE task_lists SET completed_tasks = completed_tasks + ?, failed_tasks = failed_tasks + ?,
			updated_at = ? WHERE id = (SELECT t.id FROM task_lists t, s WHERE t.id = ?`+lock+`))`, i)
		args = append(args, l.Completed, l.Failed, l.At, l.ListID)
	}
	if len(waves) > 0 {
		b.WriteString(`, w AS (UPDATE execution_waves SET completed_count = completed_count + v.c,
			failed_count = failed_count + v.f, skipped_count = skipped_count + v.k
			FROM s, (VALUES `)
		for i, w := range waves {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(`(CAST(? AS UUID), CAST(? AS INTEGER), CAST(? AS INTEGER), CAST(? AS INTEGER))`)
			args = append(args, w.WaveID, w.Completed, w.Failed, w.Skipped)
		}
		b.WriteString(`) AS v (id, c, f, k) WHERE execution_waves.id = v.id
			RETURNING execution_waves.id AS wave_id, execution_waves.status AS wave_status, execution_waves.task_count,
				execution_waves.completed_count, execution_waves.failed_count, execution_waves.skipped_count)
		SELECT s.last_seq, w.* FROM s LEFT JOIN w ON TRUE ORDER BY w.wave_id`)
	} else {
		b.WriteString(` SELECT s.last_seq FROM s`)
	}
	var rows []struct {
		LastSeq        int64              `db:"last_seq"`
		ID             *string            `db:"wave_id"`
		Status         *domain.WaveStatus `db:"wave_status"`
		TaskCount      *int               `db:"task_count"`
		CompletedCount *int               `db:"completed_count"`
		FailedCount    *int               `db:"failed_count"`
		SkippedCount   *int               `db:"skipped_count"`
	}
	switch {
	case commit:
		if err := q.selectCommit(ctx, &rows, b.String(), args); err != nil {
			return nil, err
		}
	case len(evs) <= 8 && len(lists) <= 2 && len(waves) <= 4:
		// The tails of claims and completions have a few shapes: prepared.
		if err := q.selectP(ctx, &rows, b.String(), args...); err != nil {
			return nil, err
		}
	default:
		if err := q.selectx(ctx, &rows, b.String(), args...); err != nil {
			return nil, err
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("store: the tail of project %s wrote no sequence", projectID)
	}
	last := rows[0].LastSeq
	for i, e := range evs {
		e.Seq = last - int64(len(evs)-1-i)
	}
	var out []WaveCounts
	for _, r := range rows {
		if r.ID != nil {
			out = append(out, WaveCounts{ID: *r.ID, Status: *r.Status, TaskCount: *r.TaskCount,
				CompletedCount: *r.CompletedCount, FailedCount: *r.FailedCount, SkippedCount: *r.SkippedCount})
		}
	}
	return out, nil
}
