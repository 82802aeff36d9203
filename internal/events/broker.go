package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Defaults for the zero values of Options.
const (
	DefaultPollInterval = 5 * time.Second
	DefaultWindow       = 2048
	DefaultWindowBytes  = 4 << 20
	DefaultPageSize     = 500
	DefaultBuffer       = 16
)

// Options configure a Broker; zero values take the defaults.
type Options struct {
	Logger *slog.Logger
	// PollInterval is how often every feed reads the table even without a
	// wake-up: the safety net for a lost notification.
	PollInterval time.Duration
	// Buffer is the capacity of a subscription's channel: how far a live
	// subscriber may fall behind before it is detached and catches up from
	// the window on a goroutine of its own.
	Buffer int
	// Window is how many recent events a project's feed keeps for its
	// subscribers, and WindowBytes how many bytes of payload at most. A
	// detached subscriber that falls further behind than that is ended with a
	// LagError.
	Window      int
	WindowBytes int
	// PageSize is the most rows one read of the table returns.
	PageSize int
	// ReconnectMin and ReconnectMax bound the PostgreSQL listener's reconnect
	// backoff (defaults 50ms and 5s).
	ReconnectMin, ReconnectMax time.Duration
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.WindowBytes <= 0 {
		o.WindowBytes = DefaultWindowBytes
	}
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.Buffer <= 0 {
		o.Buffer = DefaultBuffer
	}
	if o.ReconnectMin <= 0 {
		o.ReconnectMin = 50 * time.Millisecond
	}
	if o.ReconnectMax < o.ReconnectMin {
		o.ReconnectMax = max(5*time.Second, o.ReconnectMin)
	}
	return o
}

// ErrClosed is returned by Subscribe once the broker is closed.
var ErrClosed = errors.New("events: the event stream is shutting down")

// LagError ends a subscription whose subscriber fell further behind than the
// window: every event up to Cursor was handed over; resubscribing with
// after: Cursor continues without a gap.
type LagError struct {
	Cursor string
	Window int
}

func (e *LagError) Error() string {
	return fmt.Sprintf("the subscriber fell more than %d events behind; resubscribe with after: %q to continue from the last event delivered",
		e.Window, e.Cursor)
}

// StreamError ends a subscription the server could not go on serving (the
// database failed); resubscribing with after: Cursor continues without a gap.
type StreamError struct {
	Cursor string
	Err    error
}

func (e *StreamError) Error() string { return fmt.Sprintf("event stream interrupted: %v", e.Err) }
func (e *StreamError) Unwrap() error { return e.Err }

// Broker streams the event log to subscribers. It is safe for concurrent use.
type Broker struct {
	db   *store.DB
	opts Options
	log  *slog.Logger

	ctx    context.Context // ends feeds, subscribers and the listener
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	feeds  map[string]*feed // by project, while it has subscribers
	closed bool
	// relayed: projects to notify the other replicas of (relay.go).
	relayed   map[string]bool
	relayWake chan struct{}
}

// NewBroker returns a broker over db. Run it to hear other replicas and to
// poll; without Run, Published wake-ups still reach subscribers.
func NewBroker(db *store.DB, opts Options) *Broker {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Broker{db: db, opts: opts, log: opts.Logger, ctx: ctx, cancel: cancel, feeds: map[string]*feed{}}
}

// Run listens for other replicas' notifications (PostgreSQL) and polls, until
// ctx ends; then it closes the broker.
func (b *Broker) Run(ctx context.Context) {
	defer b.Close()
	if b.db.Dialect() == store.Postgres {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.listen(b.ctx)
		}()
	}
	t := time.NewTicker(b.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.ctx.Done():
			return
		case <-t.C:
			b.wakeAll()
		}
	}
}

// Close ends every subscription and waits for the broker's goroutines.
func (b *Broker) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cancel()
	b.wg.Wait()
}

// Published tells the broker that projects have new committed events; the
// service calls it after commit. It wakes this process's feeds and, on
// PostgreSQL, notifies the other replicas (relay).
func (b *Broker) Published(projectIDs ...string) {
	for _, p := range projectIDs {
		b.wake(p)
	}
	b.relay(projectIDs)
}

func (b *Broker) wake(projectID string) {
	b.mu.Lock()
	f := b.feeds[projectID]
	b.mu.Unlock()
	if f != nil {
		f.poke()
	}
}

func (b *Broker) wakeAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.feeds {
		f.poke()
	}
}

// Feeds is the number of projects with subscribers (for tests and metrics).
func (b *Broker) Feeds() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.feeds)
}

// Subscribe streams the events of a project with seq > after, in order, of the
// given types (none: all); after < 0 means from the newest committed event on.
// The channel closes when ctx ends, when the broker closes, or after onEnd
// (which may be nil) was called with a *LagError or *StreamError.
func (b *Broker) Subscribe(ctx context.Context, projectID string, after int64, types []domain.ExecutionEventType, onEnd func(error)) (<-chan domain.ExecutionEvent, error) {
	last, err := b.db.Events.LastEventSeqs(ctx, []string{projectID})
	if err != nil {
		return nil, err
	}
	head := last[projectID]
	if after < 0 {
		after = head
	}
	f, err := b.acquire(projectID, head)
	if err != nil {
		return nil, err
	}
	s := &subscriber{f: f, ctx: ctx, last: after, out: make(chan domain.ExecutionEvent, b.opts.Buffer), onEnd: onEnd}
	if len(types) > 0 {
		s.types = slices.Clone(types)
	}
	s.stopWatch = context.AfterFunc(ctx, s.cancelled)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case s.state == done: // ctx ended already
		close(s.out)
		b.wg.Done()
	case s.last >= f.head && s.last >= f.from:
		// Nothing to catch up on (the usual case): live at once.
		s.state, s.wasLive = live, true
		f.live[s] = struct{}{}
		b.wg.Done()
	default:
		go s.catchUp() // counted by acquire
	}
	return s.out, nil
}

// acquire returns the project's feed, starting it (at head, the newest event
// already committed) when the project has none, and counts one more
// subscriber — and, in b.wg, the goroutine it may need to catch up, which
// the caller starts or marks done.
func (b *Broker) acquire(projectID string, head int64) (*feed, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	f := b.feeds[projectID]
	if f == nil {
		ctx, cancel := context.WithCancel(b.ctx)
		f = &feed{b: b, project: projectID, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1),
			head: head, from: head, ring: make([]entry, b.opts.Window), live: map[*subscriber]struct{}{}}
		b.feeds[projectID] = f
		b.wg.Add(1)
		go f.run()
		// Events committed between reading head and now woke nobody.
		f.poke()
	}
	f.refs++
	b.wg.Add(1)
	return f, nil
}

// release drops a subscriber; the last one out stops the feed.
func (b *Broker) release(f *feed) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f.refs--
	if f.refs == 0 {
		if b.feeds[f.project] == f {
			delete(b.feeds, f.project)
		}
		f.cancel()
	}
}
