// Package events streams Taskgraph's event log live.
//
// A change's events are written in the change's own transaction
// (store.Q.AppendTail numbers them per project in commit order). The Broker
// streams them to subscribers: the bus (Published, an in-process call after
// commit, which also relays a PostgreSQL NOTIFY naming the project — ids
// only, never payloads — to the other replicas, which LISTEN; a slow poll as
// a safety net) only wakes it; what subscribers receive is always read from
// the table, so a lost wake-up delays an event but never loses it.
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
	"slices"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// ListenerAppName is the application_name of the listening connection, which
// makes it easy to find in pg_stat_activity.
const ListenerAppName = "taskgraph-listener"

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
