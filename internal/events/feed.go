package events

import (
	"context"
	"log/slog"
	"sort"
	"sync"

	"github.com/taskgraph/taskgraph/internal/domain"
)

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
