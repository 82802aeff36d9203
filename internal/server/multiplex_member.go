package server

import (
	"context"
	"fmt"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// sharedResponse is one response of a shared execution, handed to every member:
// the response and its encoding (nil: it failed), the event's seq and cursor
// (seq -1: a response that is no event's).
type sharedResponse struct {
	resp    *graphql.Response
	payload []byte
	seq     int64
	cursor  string
}

// member is one subscriber of a shared execution: the operation of one
// connection, answered from its queue by the transport's goroutine.
type member struct {
	ctx     context.Context
	wake    chan struct{} // signalled when the queue moves or closes
	max     int
	metrics *metrics
	conn    *wsConn // with id: the member writes its events there itself (nil: through gqlgen)
	id      string

	// The transport's goroutine alone, and the execution's while direct:
	// from is set before the member first asks.
	from   int64  // events up to it were committed before the member joined
	cursor string // of the last event handed over (or of where it joined)
	first  bool   // the first response was observed (metrics)

	mu     sync.Mutex
	queue  []*sharedResponse
	direct bool // idle with an empty queue: the execution writes its events to conn itself
	closed bool // nothing more comes: the queue drains, then errs, then the end
	lagged bool // closed because the queue was full
	errs   gqlerror.List
}

// push hands d to the member: written to its connection at once while the
// member is direct and the connection has room, else queued; false: the
// queue is full (the member is ended with the resubscribe error once it has
// written what it holds) or it has ended.
func (m *member) push(d *sharedResponse) bool {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return false
	}
	if m.direct {
		if d.seq >= 0 && d.seq <= m.from {
			m.mu.Unlock()
			return true // committed before the member joined
		}
		if len(d.resp.Errors) == 0 && d.payload != nil && m.conn.tryWriteNext(m.id, d.payload) {
			if d.seq >= 0 {
				m.cursor = d.cursor
			}
			m.mu.Unlock()
			return true
		}
		// The connection is behind (or the response is one to count): the
		// member's goroutine takes over from its queue.
		m.direct = false
	}
	if len(m.queue) >= m.max {
		m.closed, m.lagged = true, true
		m.mu.Unlock()
		m.signal()
		return false
	}
	m.queue = append(m.queue, d)
	m.mu.Unlock()
	m.signal()
	return true
}

func (m *member) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// finish closes the queue: the execution ended, with errs when it ended early.
func (m *member) finish(errs gqlerror.List) {
	m.mu.Lock()
	if !m.closed {
		m.closed = true
		m.errs = errs
	}
	m.mu.Unlock()
	m.signal()
}

// next is the member's response handler: the next response of its queue,
// or nil once the queue is drained and closed (the errors that ended it
// added to ctx for the transport to send) or ctx ends. A member that knows
// its connection writes its responses there itself and returns only at the
// end; while it waits with an empty queue the execution writes for it
// (direct), handing back to its queue when its connection is behind.
func (m *member) next(ctx context.Context) *graphql.Response {
	for {
		m.mu.Lock()
		if len(m.queue) > 0 {
			d := m.queue[0]
			m.queue[0] = nil
			m.queue = m.queue[1:]
			if len(m.queue) == 0 {
				m.queue = nil // let the backing array go while idle
			}
			m.mu.Unlock()
			if d.seq >= 0 {
				if d.seq <= m.from {
					continue // committed before the member joined
				}
				m.cursor = d.cursor
			}
			m.observe(ctx, d.resp)
			if m.conn == nil || d.payload == nil {
				return d.resp
			}
			if m.conn.writeNext(m.id, d.payload) != nil {
				return nil // the connection broke: it is closing
			}
			continue
		}
		if m.closed {
			lagged, errs := m.lagged, m.errs
			m.direct = false
			m.mu.Unlock()
			if lagged {
				errs = gqlerror.List{m.lagError(ctx)}
			}
			if len(errs) > 0 {
				addSubscriptionErrors(ctx, errs)
			}
			return nil
		}
		// Idle: the execution may write the next events itself, sparing
		// this goroutine a wake per event.
		m.direct = m.conn != nil && m.first
		m.mu.Unlock()
		select {
		case <-m.wake:
		case <-ctx.Done():
			return nil
		}
	}
}

// observe counts the member's responses as observeGraphQL counts an
// operation's: its errors, and the operation at its first response.
func (m *member) observe(ctx context.Context, resp *graphql.Response) {
	if m.first && len(resp.Errors) == 0 {
		return // nothing to count, and no walk of ctx's long chain per event
	}
	observeGraphQL{m: m.metrics}.record(ctx, resp, !m.first)
	m.first = true
}

// lagError is what a member too slow for its queue is told, as a subscriber
// too slow for the broker's window is: where to resubscribe from.
func (m *member) lagError(ctx context.Context) *gqlerror.Error {
	e := &gqlerror.Error{
		Message: fmt.Sprintf("the subscriber fell more than %d events behind; resubscribe with after: %q to continue from the last event delivered",
			m.max, m.cursor),
		Extensions: map[string]any{"code": string(domain.CodeLimitExceeded), "cursor": m.cursor, "reason": "SUBSCRIBER_TOO_SLOW"},
	}
	if graphql.HasOperationContext(ctx) {
		if op := graphql.GetOperationContext(ctx).Operation; op != nil && len(op.SelectionSet) == 1 {
			if f, ok := op.SelectionSet[0].(*ast.Field); ok {
				e.Path = ast.Path{ast.PathName(f.Alias)}
			}
		}
	}
	m.metrics.countError(string(domain.CodeLimitExceeded))
	return e
}

// addSubscriptionErrors hands the transport the errors that end the
// member's operation, sent once what it holds is written.
func addSubscriptionErrors(ctx context.Context, errs gqlerror.List) {
	defer func() { _ = recover() }() // no place for them: nobody left to tell
	for _, e := range errs {
		transport.AddSubscriptionError(ctx, e)
	}
}
