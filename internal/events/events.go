// Package events is Taskgraph's event log and its live stream.
//
// Append writes a change's events inside the change's own transaction,
// numbering them per project in commit order (see store.NextEventSeqs) and,
// on PostgreSQL, queueing a NOTIFY that names the project — ids only, never
// payloads. The Broker streams events to subscribers: the bus (an in-process
// call after commit, PostgreSQL LISTEN on every replica, a slow poll as a
// safety net) only wakes it; what subscribers receive is always read from the
// table, so a lost wake-up delays an event but never loses it.
//
// Per project with subscribers, one feed goroutine reads new rows once per
// wake-up into a window of recent events, and hands them to every subscriber
// that is up to date without ever waiting: each has a bounded channel, and
// one whose channel is full is detached and catches up from the window on a
// goroutine of its own (as new subscribers catch up from the table). One that
// falls out of the window is ended with an error naming the cursor to
// resubscribe from; nobody else waits for it.
package events

import (
	"context"
	"slices"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Channel is the PostgreSQL notification channel; a notification's payload is
// the id of the project that has new events.
const Channel = "taskgraph_events"

// ListenerAppName is the application_name of the listening connection, which
// makes it easy to find in pg_stat_activity.
const ListenerAppName = "taskgraph-listener"

// Append numbers evs — per project, in the order given — and writes them in
// q's transaction; on PostgreSQL numbering also queues a notification per
// project, which the database delivers on commit. The numbers lock each project's
// sequence until the transaction ends, so call Append last, just before
// commit (the service does so through store.Q.BeforeCommit).
func Append(ctx context.Context, q *store.Q, evs ...*domain.Event) error {
	if len(evs) == 0 {
		return nil
	}
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
		last, err := q.NextEventSeqs(ctx, p, len(list), Channel)
		if err != nil {
			return err
		}
		for i, e := range list {
			e.Seq = last - int64(len(list)-1-i)
		}
	}
	return q.InsertEvents(ctx, evs)
}

// Projects returns the distinct projects of evs.
func Projects(evs []*domain.Event) []string {
	var out []string
	for _, e := range evs {
		if !slices.Contains(out, e.ProjectID) {
			out = append(out, e.ProjectID)
		}
	}
	return out
}
