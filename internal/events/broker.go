package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Defaults for the zero values of Options.
const (
	DefaultPollInterval = 5 * time.Second
	DefaultWindow       = 2048
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
	// subscribers. A detached subscriber that falls further behind than that
	// is ended with a LagError.
	Window int
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
// service calls it after commit.
func (b *Broker) Published(projectIDs ...string) {
	for _, p := range projectIDs {
		b.wake(p)
	}
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

// entry is one event of a feed's window; ev is nil for an event this version
// cannot decode, which subscribers skip.
type entry struct {
	seq int64
	ev  domain.ExecutionEvent
}

// feed reads one project's new events into a window its subscribers share,
// and hands them to its live subscribers.
type feed struct {
	b       *Broker
	project string
	ctx     context.Context
	cancel  context.CancelFunc
	wake    chan struct{}
	refs    int // guarded by b.mu

	mu    sync.RWMutex
	head  int64   // newest seq read; written by run only
	from  int64   // the window holds every event with from < seq <= head
	ring  []entry // the window: n entries from start, in seq order
	start int
	n     int
	live  map[*subscriber]struct{} // subscribers that are up to date
}

func (f *feed) poke() {
	select {
	case f.wake <- struct{}{}:
	default: // a wake-up is pending already; it will read everything
	}
}

func (f *feed) run() {
	defer f.b.wg.Done()
	defer f.stop()
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-f.wake:
		}
		f.read()
	}
}

// stop ends the live subscriptions when the feed stops (the broker closes).
func (f *feed) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.live {
		delete(f.live, s)
		s.state = done
		close(s.out)
	}
}

// read moves the window to the newest committed event and hands the new
// events to the live subscribers.
func (f *feed) read() {
	for f.ctx.Err() == nil {
		rows, err := f.b.db.Events.EventsAfter(f.ctx, f.project, f.head, 0, nil, f.b.opts.PageSize)
		if err != nil {
			if f.ctx.Err() == nil {
				// The next wake-up or poll tries again.
				f.b.log.Warn("reading new events failed", slog.String("project", f.project), slog.Any("err", err))
			}
			return
		}
		if len(rows) == 0 {
			return
		}
		entries := make([]entry, len(rows))
		for i, r := range rows {
			entries[i] = f.b.decode(r)
		}
		f.mu.Lock()
		for _, e := range entries {
			f.push(e)
		}
		f.head = rows[len(rows)-1].Seq
		for s := range f.live {
			f.deliver(s, entries)
		}
		f.mu.Unlock()
		if len(rows) < f.b.opts.PageSize {
			return
		}
	}
}

// deliver hands entries to a live subscriber without ever waiting: when its
// channel is full, it is detached and catches up from the window on a
// goroutine of its own, so that nobody waits for it. Callers hold f.mu.
func (f *feed) deliver(s *subscriber, entries []entry) {
	for _, e := range entries {
		if e.seq <= s.last {
			continue
		}
		if s.wants(e.ev) {
			select {
			case s.out <- e.ev:
			default:
				delete(f.live, s)
				f.startCatchUp(s)
				return
			}
		}
		s.last = e.seq
	}
}

// startCatchUp runs s on its own goroutine until it is up to date. Callers
// hold f.mu, on the feed's goroutine (which b.wg counts, so adding to it is
// safe even while the broker closes).
func (f *feed) startCatchUp(s *subscriber) {
	s.state = catching
	f.b.wg.Add(1)
	go s.catchUp()
}

func (b *Broker) decode(r *domain.Event) entry {
	ev, err := domain.DecodeEvent(r)
	if err != nil {
		b.log.Warn("skipping an event this version cannot decode", slog.Any("err", err))
		return entry{seq: r.Seq}
	}
	return entry{seq: r.Seq, ev: ev}
}

// push appends e to the window, evicting the oldest entry when it is full.
// Callers hold f.mu.
func (f *feed) push(e entry) {
	if f.n == len(f.ring) {
		f.from = f.ring[f.start].seq
		f.ring[f.start] = entry{}
		f.start = (f.start + 1) % len(f.ring)
		f.n--
	}
	f.ring[(f.start+f.n)%len(f.ring)] = e
	f.n++
}

// collect appends to dst up to cap(dst) window entries with seq > last.
// Callers hold f.mu for reading.
func (f *feed) collect(last int64, dst []entry) []entry {
	at := func(i int) entry { return f.ring[(f.start+i)%len(f.ring)] }
	i := sort.Search(f.n, func(i int) bool { return at(i).seq > last })
	for ; i < f.n && len(dst) < cap(dst); i++ {
		dst = append(dst, at(i))
	}
	return dst
}

// subState is where a subscriber gets its events from.
type subState int

const (
	// catching: its own goroutine reads the table, then the window, and owns out.
	catching subState = iota
	// live: the feed hands it new events and owns out.
	live
	// done: out is closed (or about to be, by its owner).
	done
)

// subscriber is one subscription.
type subscriber struct {
	f         *feed
	ctx       context.Context
	types     []domain.ExecutionEventType
	out       chan domain.ExecutionEvent
	onEnd     func(error)
	stopWatch func() bool // stops the watch on ctx
	released  sync.Once

	// Guarded by f.mu; last is the catching goroutine's alone while catching.
	state   subState
	last    int64 // seq of the last event handed over (or skipped by the filter)
	wasLive bool  // it was up to date once: falling out of the window now is lagging
}

func (s *subscriber) wants(ev domain.ExecutionEvent) bool {
	return ev != nil && (s.types == nil || slices.Contains(s.types, ev.Record().Type))
}

// cancelled runs when the subscription's context ends.
func (s *subscriber) cancelled() {
	f := s.f
	f.mu.Lock()
	switch s.state {
	case live:
		delete(f.live, s)
		s.state = done
		close(s.out)
	case catching:
		s.state = done // its goroutine closes out on its way out
	}
	f.mu.Unlock()
	s.release()
}

func (s *subscriber) release() {
	s.released.Do(func() { s.f.b.release(s.f) })
}

// finish ends a catching subscriber, telling it why when err is not nil.
func (s *subscriber) finish(err error) {
	f := s.f
	f.mu.Lock()
	s.state = done
	f.mu.Unlock()
	if err != nil && s.onEnd != nil {
		s.onEnd(err)
	}
	close(s.out)
	if s.stopWatch != nil {
		s.stopWatch()
	}
	s.release()
}

// catchUp hands over the events after s.last — from the table until the
// window reaches back far enough, then from the window — and makes s live
// once it is up to date. A subscriber that was live before and fell out of
// the window is ended with a LagError instead.
func (s *subscriber) catchUp() {
	f := s.f
	defer f.b.wg.Done()
	batch := make([]entry, 0, 64)
	for {
		if s.ctx.Err() != nil || f.ctx.Err() != nil {
			s.finish(nil)
			return
		}
		f.mu.RLock()
		if s.state == done {
			f.mu.RUnlock()
			s.finish(nil)
			return
		}
		if s.last < f.from {
			upTo, wasLive := f.from, s.wasLive
			f.mu.RUnlock()
			if wasLive {
				s.finish(&LagError{Cursor: domain.EventCursor(f.project, s.last), Window: len(f.ring)})
				return
			}
			if err := s.readTable(upTo); err != nil {
				if s.ctx.Err() != nil || f.ctx.Err() != nil {
					err = nil
				}
				s.finish(err)
				return
			}
			continue
		}
		batch = f.collect(s.last, batch[:0])
		f.mu.RUnlock()
		if len(batch) == 0 {
			f.mu.Lock()
			if s.state == catching && s.last >= f.head {
				s.state, s.wasLive = live, true
				f.live[s] = struct{}{}
				f.mu.Unlock()
				return
			}
			f.mu.Unlock()
			continue
		}
		for _, e := range batch {
			if s.wants(e.ev) && !s.send(e.ev) {
				break // the loop's checks end it
			}
			s.last = e.seq
		}
		clear(batch) // let evicted events be collected
	}
}

// readTable hands over the events in (s.last, upTo] from the table, a page at
// a time.
func (s *subscriber) readTable(upTo int64) error {
	f := s.f
	page := f.b.opts.PageSize
	rows, err := f.b.db.Events.EventsAfter(s.ctx, f.project, s.last, upTo, s.types, page)
	if err != nil {
		return &StreamError{Cursor: domain.EventCursor(f.project, s.last), Err: err}
	}
	for _, r := range rows {
		if e := f.b.decode(r); e.ev != nil && !s.send(e.ev) {
			return nil // ended: the caller's checks see it
		}
		s.last = r.Seq
	}
	if len(rows) < page {
		s.last = upTo // the rest up to upTo are of other types
	}
	return nil
}

func (s *subscriber) send(ev domain.ExecutionEvent) bool {
	select {
	case s.out <- ev:
		return true
	case <-s.ctx.Done():
	case <-s.f.ctx.Done():
	}
	return false
}
