package server

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// Subscriptions whose stream starts "from now on" are multiplexed: every
// subscriber of the same document, operation, variables and visibility (the
// principal's token, user, role and project scope) is a member of one shared
// execution, which resolves each event's selection once; its responses are
// fanned out to the members, each through a bounded queue of its own. What
// each member keeps of its own: its operation on its connection (the
// per-connection and per-user caps count it, revocation closes it), its
// start (a member joining a running execution is handed only the events
// committed after it joined), and its pace (a member whose queue is full is
// ended with the resubscribe error, the others go on). The execution stops
// when its last member leaves.

// SharedSubscriptions decides which subscriptions share an execution (the
// schema's knowledge: graph.SharedSubscriptions).
type SharedSubscriptions interface {
	// Shares reports whether the subscription field with args (variables
	// substituted) streams from now on, so that its subscribers may share
	// one execution.
	Shares(field string, args map[string]any) bool
	// Join checks that the caller of ctx may subscribe to field with args
	// and returns the stream's position now: the seq and cursor of the
	// newest committed event. An error leaves the subscription to run on
	// its own, which reports it.
	Join(ctx context.Context, field string, args map[string]any) (seq int64, cursor string, err error)
}

// DefaultSharedQueue bounds the responses waiting for one member of a shared
// subscription: one that falls further behind is ended with LIMIT_EXCEEDED
// and the cursor to resume from.
const DefaultSharedQueue = 1024

// multiplexer holds the shared executions of a server's subscriptions.
type multiplexer struct {
	shared  SharedSubscriptions
	queue   int
	metrics *metrics

	mu     sync.Mutex
	groups map[string]*sharedExec
}

func newMultiplexer(shared SharedSubscriptions, queue int, m *metrics) *multiplexer {
	if queue <= 0 {
		queue = DefaultSharedQueue
	}
	return &multiplexer{shared: shared, queue: queue, metrics: m, groups: map[string]*sharedExec{}}
}

// executions is the number of shared executions running (tests, metrics).
func (x *multiplexer) executions() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.groups)
}

// muxExecutor is the executor the websocket transport runs: the server's,
// with subscriptions multiplexed.
type muxExecutor struct {
	graphql.GraphExecutor
	x *multiplexer
}

func (x *multiplexer) wrap(exec graphql.GraphExecutor) graphql.GraphExecutor {
	if x == nil || x.shared == nil {
		return exec
	}
	return muxExecutor{GraphExecutor: exec, x: x}
}

// sharedKey marks the context of a shared execution: its responses are
// observed (metrics) per member, not once more for the execution.
type sharedKey struct{}

func (e muxExecutor) DispatchOperation(ctx context.Context, opCtx *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	conn, id := operationConn(ctx, opCtx)
	field, key := shareKey(ctx, opCtx)
	if field == nil {
		return e.GraphExecutor.DispatchOperation(ctx, opCtx)
	}
	args := field.ArgumentMap(opCtx.Variables)
	if !e.x.shared.Shares(field.Name, args) {
		return e.GraphExecutor.DispatchOperation(ctx, opCtx)
	}
	writes := "connection"
	if conn == nil {
		writes = "gqlgen"
	}
	e.x.metrics.sharedMembers.WithLabelValues(writes).Inc()
	for {
		g, created := e.x.group(ctx, key)
		if g == nil {
			return func(context.Context) *graphql.Response { return nil }, ctx // ctx ended while waiting
		}
		m := &member{ctx: ctx, from: -1, wake: make(chan struct{}, 1), max: e.x.queue, metrics: e.x.metrics, conn: conn, id: id}
		if !created && !g.attach(m) {
			continue // it ended meanwhile: another round
		}
		// After attaching, so that nothing committed after this read
		// passes the member by; the events up to it are skipped.
		seq, cursor, err := e.x.shared.Join(ctx, field.Name, args)
		if err != nil {
			if created {
				e.x.abandon(g)
			} else {
				g.leave(m)
			}
			return e.GraphExecutor.DispatchOperation(ctx, opCtx)
		}
		m.cursor = cursor
		if created {
			if !g.start(e.GraphExecutor, ctx, opCtx, m) {
				// The stream did not start (its error is in the response):
				// the creator runs it alone.
				return g.solo, ctx
			}
		} else {
			m.from = seq
		}
		context.AfterFunc(ctx, func() { g.leave(m) })
		return m.next, ctx
	}
}

// shareKey returns the root field of a subscription that may be shared and
// the key of its selection and caller; field is nil when it may not: not a
// subscription, not one plain root field, or no caller.
func shareKey(ctx context.Context, opCtx *graphql.OperationContext) (*ast.Field, string) {
	op := opCtx.Operation
	p := auth.FromContext(ctx)
	if op == nil || op.Operation != ast.Subscription || p == nil || len(op.SelectionSet) != 1 {
		return nil, ""
	}
	field, ok := op.SelectionSet[0].(*ast.Field)
	if !ok || len(field.Directives) > 0 {
		return nil, ""
	}
	var b bytes.Buffer
	formatter.NewFormatter(&b, formatter.WithComments()).FormatQueryDocument(opCtx.Doc)
	vars, err := json.Marshal(opCtx.Variables) // map keys sorted
	if err != nil {
		return nil, ""
	}
	scope := ""
	if p.ProjectID != nil {
		scope = *p.ProjectID
	}
	key, err := json.Marshal([]string{b.String(), opCtx.OperationName, string(vars), p.TokenID, p.UserID, string(p.Role), scope})
	if err != nil {
		return nil, ""
	}
	return field, string(key)
}

// group returns the running execution of key, waiting until it has started,
// or a new one that the caller starts (created). nil: ctx ended.
func (x *multiplexer) group(ctx context.Context, key string) (g *sharedExec, created bool) {
	for {
		x.mu.Lock()
		g = x.groups[key]
		if g == nil {
			g = &sharedExec{x: x, key: key, ready: make(chan struct{}), members: map[*member]struct{}{}}
			x.groups[key] = g
			x.mu.Unlock()
			return g, true
		}
		x.mu.Unlock()
		select {
		case <-g.ready:
		case <-ctx.Done():
			return nil, false
		}
		g.mu.Lock()
		ok := !g.ended
		g.mu.Unlock()
		if ok {
			return g, false
		}
	}
}

// abandon drops a group that never started.
func (x *multiplexer) abandon(g *sharedExec) {
	x.mu.Lock()
	if x.groups[g.key] == g {
		delete(x.groups, g.key)
	}
	x.mu.Unlock()
	g.mu.Lock()
	g.ended = true
	g.mu.Unlock()
	close(g.ready)
}

// sharedExec is one shared execution and its members.
type sharedExec struct {
	x      *multiplexer
	key    string
	ready  chan struct{} // closed once started (or abandoned)
	cancel context.CancelFunc
	solo   graphql.ResponseHandler // the creator's own handler when the stream did not start

	mu      sync.Mutex
	ended   bool
	members map[*member]struct{}
	handed  []handed // events handed to the executor, not yet answered
	errs    gqlerror.List
}

// handed is an event the stream handed to the executor.
type handed struct {
	seq    int64
	cursor string
}

// start runs the execution with the creator's context and operation, the
// creator its first member; false: the stream did not start (an error), and
// g.solo is the creator's handler.
func (g *sharedExec) start(exec graphql.GraphExecutor, ctx context.Context, opCtx *graphql.OperationContext, creator *member) bool {
	tap := &domain.StreamTap{Handed: g.hand, End: g.end}
	gctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), sharedKey{}, true))
	g.cancel = cancel
	handler, _ := exec.DispatchOperation(domain.WithStreamTap(gctx, tap), opCtx)
	if !tap.Tapped {
		g.x.abandon(g)
		g.solo = handler
		context.AfterFunc(ctx, cancel)
		return false
	}
	g.mu.Lock()
	g.members[creator] = struct{}{}
	g.mu.Unlock()
	close(g.ready)
	g.x.metrics.sharedExecutions.Inc()
	go g.run(gctx, handler)
	return true
}

// attach adds m to a started execution; false: it has ended.
func (g *sharedExec) attach(m *member) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		return false
	}
	g.members[m] = struct{}{}
	return true
}

// leave drops m; the last member out stops the execution.
func (g *sharedExec) leave(m *member) {
	g.x.mu.Lock()
	defer g.x.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.members, m)
	if len(g.members) > 0 || g.ended {
		return
	}
	g.ended = true
	if g.x.groups[g.key] == g {
		delete(g.x.groups, g.key)
	}
	if g.cancel != nil {
		g.cancel()
	}
}

func (g *sharedExec) hand(seq int64, cursor string) {
	g.mu.Lock()
	g.handed = append(g.handed, handed{seq: seq, cursor: cursor})
	g.mu.Unlock()
}

func (g *sharedExec) end(err error) {
	var ge *gqlerror.Error
	if e, ok := err.(*gqlerror.Error); ok {
		ge = e
	} else {
		ge = &gqlerror.Error{Message: err.Error(), Extensions: map[string]any{"code": string(domain.CodeInternal)}}
	}
	g.mu.Lock()
	g.errs = append(g.errs, ge)
	g.mu.Unlock()
}

// run resolves the stream's events once each and hands every response to
// every member; it ends when the stream does or the last member left.
func (g *sharedExec) run(ctx context.Context, handler graphql.ResponseHandler) {
	defer g.x.metrics.sharedExecutions.Dec()
	defer g.cancel()
	for {
		resp := handler(ctx)
		if resp == nil {
			break
		}
		// The generated executor writes every event of a subscription into
		// one buffer, reset at the next: the members, who write it later,
		// get a copy of their own.
		shared := *resp
		shared.Data = bytes.Clone(resp.Data)
		resp = &shared
		// Marshalled once for every member that writes its own (wsdirect.go).
		payload, err := json.Marshal(resp)
		if err != nil {
			payload = nil
		}
		g.mu.Lock()
		d := &sharedResponse{resp: resp, payload: payload, seq: -1}
		if len(g.handed) > 0 {
			d.seq, d.cursor = g.handed[0].seq, g.handed[0].cursor
			g.handed[0] = handed{}
			g.handed = g.handed[1:]
		}
		for m := range g.members {
			if !m.push(d) {
				delete(g.members, m) // too slow: ended alone
			}
		}
		g.mu.Unlock()
	}
	g.x.mu.Lock()
	if g.x.groups[g.key] == g {
		delete(g.x.groups, g.key)
	}
	g.x.mu.Unlock()
	g.mu.Lock()
	g.ended = true
	for m := range g.members {
		m.finish(g.errs)
	}
	clear(g.members)
	g.mu.Unlock()
}
