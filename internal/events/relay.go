package events

import (
	"context"
	"log/slog"
	"time"

	"github.com/taskgraph/taskgraph/internal/store"
)

// The relay tells the other replicas that projects have new events: a
// PostgreSQL NOTIFY naming each project, sent after the commit by one
// goroutine per broker, which sends whatever projects were published while
// its previous notification was in flight, or in the relayGather after a
// wake-up, in a single statement.
//
// A NOTIFY inside the writing transaction would be delivered exactly on
// commit, but PostgreSQL serialises the commits of every notifying
// transaction (a lock held through the commit's WAL flush), and the writer
// holds its project's event sequence meanwhile: every transaction of a busy
// project would queue on it. A notification is only a wake-up — subscribers
// read the table, and every replica polls it every PollInterval — so one
// lost with a crash between commit and relay delays an event, never loses it.

// relayFlushTimeout bounds the last notification a closing broker sends.
const relayFlushTimeout = time.Second

// relayGather is how long the relay waits after a wake-up for more projects
// to notify with it: a busy replica then sends one notification per few
// milliseconds rather than one per commit, each of which PostgreSQL queues
// under one lock of the whole database. Another replica's subscribers hear
// of an event that much later; this replica's are woken directly.
const relayGather = 5 * time.Millisecond

// relay queues projects for the other replicas (PostgreSQL only).
func (b *Broker) relay(projectIDs []string) {
	if b.db.Dialect() != store.Postgres || len(projectIDs) == 0 {
		return
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	if b.relayed == nil {
		b.relayed = map[string]bool{}
		b.relayWake = make(chan struct{}, 1)
		b.wg.Add(1)
		go b.relayLoop()
	}
	for _, p := range projectIDs {
		b.relayed[p] = true
	}
	b.mu.Unlock()
	select {
	case b.relayWake <- struct{}{}:
	default:
	}
}

// relayLoop sends the queued notifications until the broker closes, then
// sends what is left.
func (b *Broker) relayLoop() {
	defer b.wg.Done()
	for {
		select {
		case <-b.ctx.Done():
			ctx, cancel := context.WithTimeout(context.Background(), relayFlushTimeout)
			b.sendRelayed(ctx)
			cancel()
			return
		case <-b.relayWake:
			gather := time.NewTimer(relayGather)
			select {
			case <-b.ctx.Done():
				gather.Stop()
				continue // the closing case sends what is queued
			case <-gather.C:
			}
			b.sendRelayed(b.ctx)
		}
	}
}

// sendRelayed notifies the queued projects in one statement.
func (b *Broker) sendRelayed(ctx context.Context) {
	b.mu.Lock()
	projects := make([]string, 0, len(b.relayed))
	for p := range b.relayed {
		projects = append(projects, p)
	}
	clear(b.relayed)
	b.mu.Unlock()
	if len(projects) == 0 {
		return
	}
	if err := b.db.Notify(ctx, projects); err != nil && ctx.Err() == nil {
		b.log.Warn("notifying other replicas failed; they will poll", slog.Any("err", err))
	}
}
