package events

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// subState is where a subscriber gets its events from.
type subState int

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
	var outage time.Duration // the wait before the next read while the database is unavailable
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
				if errors.Is(err, store.ErrUnavailable) && s.waitForDatabase(&outage) {
					continue
				}
				if s.ctx.Err() != nil || f.ctx.Err() != nil {
					err = nil
				}
				s.finish(err)
				return
			}
			outage = 0
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

// Waits of a catching subscriber while the database is unavailable: from
// the first to the last, doubling.
const (
	outageWaitMin = 100 * time.Millisecond
	outageWaitMax = 2 * time.Second
)

// waitForDatabase waits before a catching subscriber reads the table again
// after the database could not be reached (restarting, failing over): the
// subscription outlives the outage instead of ending. It reports false when
// the subscription or the broker ended meanwhile.
func (s *subscriber) waitForDatabase(wait *time.Duration) bool {
	*wait = min(max(2**wait, outageWaitMin), outageWaitMax)
	t := time.NewTimer(*wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
	case <-s.f.ctx.Done():
	}
	return false
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

const (
	// catching: its own goroutine reads the table, then the window, and owns out.
	catching subState = iota
	// live: the feed hands it new events and owns out.
	live
	// done: out is closed (or about to be, by its owner).
	done
)
