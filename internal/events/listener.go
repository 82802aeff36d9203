package events

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/lib/pq"

	"github.com/taskgraph/taskgraph/internal/store"
)

// listen hears the notifications of every replica on one dedicated
// connection and wakes the feeds of the projects they name. Notifications
// sent while the connection is down are lost, so every (re)connect wakes
// every feed: each reads the table from where it stopped.
func (b *Broker) listen(ctx context.Context) {
	dsn, err := b.db.ListenerDSN(ListenerAppName)
	if err != nil {
		b.log.Error("cannot listen for events of other replicas", slog.Any("err", err))
		return
	}
	l := pq.NewListener(dsn, b.opts.ReconnectMin, b.opts.ReconnectMax, func(ev pq.ListenerEventType, err error) {
		switch ev {
		case pq.ListenerEventConnected:
			b.log.Debug("event listener connected")
			b.wakeAll()
		case pq.ListenerEventReconnected:
			b.log.Info("event listener reconnected; catching up from the table")
			b.wakeAll()
		case pq.ListenerEventDisconnected:
			b.log.Warn("event listener lost its connection; reconnecting", slog.Any("err", err))
		case pq.ListenerEventConnectionAttemptFailed:
			b.log.Warn("event listener cannot connect; retrying", slog.Any("err", err))
		}
	})
	listening := make(chan struct{})
	go func() {
		defer close(listening)
		// Blocks until the first connection; Close ends it early.
		if err := l.Listen(store.EventsChannel); err != nil {
			if !errors.Is(err, net.ErrClosed) {
				b.log.Error("LISTEN failed", slog.String("channel", store.EventsChannel), slog.Any("err", err))
			}
			return
		}
		// The connect event came before LISTEN took effect: a commit in between
		// notified nobody, so every feed reads the table once more.
		b.wakeAll()
	}()
	pinged := make(chan struct{})
	go func() {
		defer close(pinged)
		b.pingListener(ctx, l)
	}()
	defer func() {
		_ = l.Close()
		<-listening
		<-pinged
		// The listener's goroutine may still hand over a notification before
		// it closes Notify; drain so that it can finish.
		go func() {
			for range l.Notify {
			}
		}()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case n, ok := <-l.Notify:
			switch {
			case !ok:
				return
			case n == nil: // reconnected: anything may have been missed
				b.wakeAll()
			default:
				b.wake(n.Extra)
			}
		}
	}
}

// pingListener checks the listening connection every poll interval, so that a
// connection that died silently (no TCP reset) is noticed and replaced.
func (b *Broker) pingListener(ctx context.Context, l *pq.Listener) {
	t := time.NewTicker(b.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := l.Ping(); err != nil {
				b.log.Debug("event listener ping failed", slog.Any("err", err))
			}
		}
	}
}
