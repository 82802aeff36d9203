package store

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/lib/pq"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// EventsChannel is the PostgreSQL notification channel of the event log; a
// notification's payload is the id of a project that has new events.
const EventsChannel = "taskgraph_events"

// Notify wakes the event feeds of the other replicas for projects: one
// NOTIFY per project on EventsChannel, in one statement, after the events
// committed (the broker's relay). Background work: not counted in
// Statements(). SQLite has no other replicas.
func (d *DB) Notify(ctx context.Context, projectIDs []string) error {
	if d.dialect != Postgres || len(projectIDs) == 0 {
		return nil
	}
	_, err := d.sqlx.ExecContext(ctx, `SELECT pg_notify($1, p) FROM unnest(CAST($2 AS TEXT[])) AS p`,
		EventsChannel, pq.Array(projectIDs))
	return mapErr(err)
}

// AppendEvents numbers evs — per project, in the order given — and writes
// them. The numbers lock each project's sequence until the transaction
// ends, so a transaction appends its events last, just before it commits:
// on PostgreSQL one statement per project numbers and inserts, so the
// sequence is held for that statement and the commit. (The other replicas
// hear of the events after the commit: Notify.)
func (q EventQueries) AppendEvents(ctx context.Context, evs []*domain.Event) error {
	if len(evs) == 0 {
		return nil
	}
	q.noteEvents(evs)
	byProject := map[string][]*domain.Event{}
	for _, e := range evs {
		byProject[e.ProjectID] = append(byProject[e.ProjectID], e)
	}
	// One lock order for every transaction: no deadlock between two changes
	// that touch the same projects.
	projects := make([]string, 0, len(byProject))
	for p := range byProject {
		projects = append(projects, p)
	}
	slices.Sort(projects)
	for _, p := range projects {
		list := byProject[p]
		if q.db.dialect == Postgres {
			if err := q.appendPostgres(ctx, p, list); err != nil {
				return err
			}
			continue
		}
		last, err := q.nextEventSeqs(ctx, p, len(list))
		if err != nil {
			return err
		}
		for i, e := range list {
			e.Seq = last - int64(len(list)-1-i)
		}
		if err := q.insertEvents(ctx, list); err != nil {
			return err
		}
	}
	return nil
}

// HoldSequence locks a project's event sequence until the transaction ends,
// for a transaction that must decide under it before it appends its events.
// A project without events yet has no sequence to hold: its first events
// create it. SQLite's writer holds everything already.
func (q EventQueries) HoldSequence(ctx context.Context, projectID string) error {
	if q.db.dialect != Postgres {
		return nil
	}
	var held []int64
	return q.selectx(ctx, &held, `SELECT last_seq FROM event_sequences WHERE project_id = ?`+q.forUpdate(), projectID)
}

// eventBatch bounds the events of one appending statement (9 parameters
// each, under PostgreSQL's limit).
const eventBatch = 1000

// appendPostgres numbers a project's events and inserts them, in one
// statement per eventBatch events.
func (q EventQueries) appendPostgres(ctx context.Context, projectID string, list []*domain.Event) error {
	for start := 0; start < len(list); start += eventBatch {
		batch := list[start:min(start+eventBatch, len(list))]
		var b strings.Builder
		args := []any{projectID, len(batch)}
		b.WriteString(`WITH s AS (INSERT INTO event_sequences (project_id, last_seq) VALUES (?, ?)
			ON CONFLICT (project_id) DO UPDATE SET last_seq = event_sequences.last_seq + excluded.last_seq
			RETURNING last_seq)
			INSERT INTO events (project_id, seq, run_id, task_id, agent_id, session_id, type, payload, occurred_at)
			SELECT CAST(? AS UUID), s.last_seq - v.back, v.run_id, v.task_id, v.agent_id, v.session_id, v.type, v.payload,
				v.occurred_at FROM s, (VALUES `)
		args = append(args, projectID)
		for i, e := range batch {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(`(CAST(? AS BIGINT), CAST(? AS UUID), CAST(? AS UUID), CAST(? AS UUID), CAST(? AS UUID),
				CAST(? AS TEXT), CAST(? AS JSONB), CAST(? AS TIMESTAMPTZ))`)
			args = append(args, len(batch)-1-i, e.RunID, e.TaskID, e.AgentID, e.SessionID, e.Type, e.Payload, e.OccurredAt)
		}
		b.WriteString(`) AS v (back, run_id, task_id, agent_id, session_id, type, payload, occurred_at) RETURNING seq`)
		var seqs []int64
		if err := q.selectx(ctx, &seqs, b.String(), args...); err != nil {
			return err
		}
		last := slices.Max(seqs)
		for i, e := range batch {
			e.Seq = last - int64(len(batch)-1-i)
		}
	}
	return nil
}

// nextEventSeqs reserves n event numbers of a project and returns the last of
// them (they are last-n+1 … last). The project's counter row stays locked
// until commit or rollback, so numbers commit in order and a rollback gives
// its numbers back: a project's committed events are always 1 … N. Take them
// as late in the transaction as possible. (SQLite; on PostgreSQL
// appendPostgres numbers and inserts in one statement.)
func (q EventQueries) nextEventSeqs(ctx context.Context, projectID string, n int) (int64, error) {
	var last int64
	err := q.get(ctx, &last, `INSERT INTO event_sequences (project_id, last_seq) VALUES (?, ?)
		ON CONFLICT (project_id) DO UPDATE SET last_seq = event_sequences.last_seq + excluded.last_seq
		RETURNING last_seq`, projectID, n)
	return last, err
}

// insertEvents writes events (numbered already) in one statement.
func (q EventQueries) insertEvents(ctx context.Context, evs []*domain.Event) error {
	if len(evs) == 0 {
		return nil
	}
	_, err := q.namedExec(ctx, `INSERT INTO events (project_id, seq, run_id, task_id, agent_id, session_id, type, payload, occurred_at)
		VALUES (:project_id, :seq, :run_id, :task_id, :agent_id, :session_id, :type, :payload, :occurred_at)`, evs)
	return err
}

// EventsAfter lists up to limit events of a project with after < seq <= upTo
// (upTo 0: no upper bound), of the given types (none: all), in seq order.
func (q EventQueries) EventsAfter(ctx context.Context, projectID string, after, upTo int64, types []domain.ExecutionEventType, limit int) ([]*domain.Event, error) {
	query := `SELECT * FROM events WHERE project_id = ? AND seq > ?`
	args := []any{projectID, after}
	if upTo > 0 {
		query += ` AND seq <= ?`
		args = append(args, upTo)
	}
	if len(types) > 0 {
		query += ` AND type IN (?)`
		args = append(args, types)
	}
	query += ` ORDER BY seq LIMIT ` + strconv.Itoa(limit)
	query, args = in(query, args...)
	var out []*domain.Event
	if err := q.selectx(ctx, &out, query, args...); err != nil {
		return nil, err
	}
	return out, nil
}

// LastEventSeqs returns the number of the newest committed event of each
// project (projects without events are absent).
func (q EventQueries) LastEventSeqs(ctx context.Context, projectIDs []string) (map[string]int64, error) {
	if len(projectIDs) == 0 {
		return map[string]int64{}, nil
	}
	query, args := in(`SELECT project_id, MAX(seq) AS seq FROM events WHERE project_id IN (?) GROUP BY project_id`, projectIDs)
	var rows []struct {
		ProjectID string `db:"project_id"`
		Seq       int64  `db:"seq"`
	}
	if err := q.selectx(ctx, &rows, query, args...); err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.ProjectID] = r.Seq
	}
	return out, nil
}

// EventQuery selects events for a connection: per project, oldest first.
type EventQuery struct {
	ProjectIDs []string
	// RunIDs, when set, pages by run instead of by project.
	RunIDs []string
	Types  []domain.ExecutionEventType
	Page   domain.PageArgs
}

func eventPageQuery(eq EventQuery) *pageQuery[*domain.Event] {
	pq := &pageQuery[*domain.Event]{
		selectCols: "e.*", from: "events e", idCol: "e.seq",
		key:       sortKey{col: "e.seq", kind: keyInt},
		keyOf:     func(e *domain.Event) any { return e.Seq },
		idOf:      func(e *domain.Event) string { return strconv.FormatInt(e.Seq, 10) },
		parentCol: "e.project_id", parents: eq.ProjectIDs,
		parentOf: func(e *domain.Event) string { return e.ProjectID },
		page:     eq.Page,
		cursorOf: func(e *domain.Event) string { return e.Cursor() },
		parseCursor: func(s, field string) (*cursor, error) {
			_, seq, err := domain.ParseEventCursor(s, field)
			if err != nil {
				return nil, err
			}
			return &cursor{Key: seq, ID: strconv.FormatInt(seq, 10)}, nil
		},
	}
	if len(eq.RunIDs) > 0 {
		pq.parentCol, pq.parents = "e.run_id", eq.RunIDs
		pq.parentOf = func(e *domain.Event) string { return deref(e.RunID) }
	}
	if len(eq.Types) > 0 {
		pq.filter("e.type IN (?)", eq.Types)
	}
	return pq
}

// EventsByProjects pages the events of each project.
func (q EventQueries) EventsByProjects(ctx context.Context, eq EventQuery) (map[string]domain.Page[*domain.Event], error) {
	return eventPageQuery(eq).fetch(ctx, q.Q)
}

// CountEventsByProjects counts the events of each project (of the given types).
func (q EventQueries) CountEventsByProjects(ctx context.Context, eq EventQuery) (map[string]int, error) {
	return eventPageQuery(eq).count(ctx, q.Q)
}

// FirstRunEventSeq is the seq of a run's first event (0: none).
func (q EventQueries) FirstRunEventSeq(ctx context.Context, projectID, runID string) (int64, error) {
	var seq int64
	err := q.get(ctx, &seq, `SELECT COALESCE(MIN(seq), 0) FROM events WHERE project_id = ? AND run_id = ?`, projectID, runID)
	return seq, err
}
