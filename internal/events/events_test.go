package events_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/events"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// waitLimit bounds how long a test waits for something that must happen; it
// is a hang guard, not a latency assertion.
const waitLimit = 30 * time.Second

// bundle is one migrated database with a user and a project, and a broker.
type bundle struct {
	url     string
	db      *store.DB
	ctx     context.Context
	user    string
	project string
	broker  *events.Broker
}

func setup(t *testing.T, url string, opts events.Options) *bundle {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, db.Migrate(ctx))
	b := &bundle{url: url, db: db, ctx: ctx, user: uuid.NewString()}
	now := time.Now().UTC()
	require.NoError(t, db.Users.CreateUser(ctx, &domain.User{ID: b.user, Slug: "u", Name: "u", Email: "u@example.com",
		Settings: domain.JSON(`{}`), CreatedAt: now, UpdatedAt: now}))
	b.project = b.newProject(t, "proj")
	b.broker = events.NewBroker(db, opts)
	t.Cleanup(b.broker.Close)
	return b
}

func run(t *testing.T, opts events.Options, f func(t *testing.T, b *bundle)) {
	testdb.Run(t, func(t *testing.T, url string) { f(t, setup(t, url, opts)) })
}

func (b *bundle) newProject(t *testing.T, slug string) string {
	t.Helper()
	id := uuid.NewString()
	now := time.Now().UTC()
	require.NoError(t, b.db.Projects.CreateProject(b.ctx, &domain.Project{ID: id, Slug: slug, Name: slug, OwnerID: b.user,
		Status: domain.ProjectActive, CreatedAt: now, UpdatedAt: now}))
	return id
}

// event is a TASK_UPDATED event of project whose changed field names n.
func event(project string, n int) *domain.Event {
	t := &domain.Task{ID: uuid.NewString(), ProjectID: project}
	return domain.NewTaskUpdated(t, []string{fmt.Sprint(n)}, time.Now().UTC().Truncate(time.Microsecond))
}

// commit appends events in one transaction and wakes the broker, as the
// service does.
func (b *bundle) commit(t testing.TB, evs ...*domain.Event) {
	t.Helper()
	require.NoError(t, b.db.InTx(b.ctx, func(q *store.Q) error { return q.Events.AppendEvents(b.ctx, evs) }))
	b.broker.Published(events.Projects(evs)...)
}

// label is what event() put in the changed fields.
func label(ev domain.ExecutionEvent) string { return ev.(*domain.TaskUpdated).ChangedFields[0] }

// receive reads n events from ch.
func receive(t *testing.T, ch <-chan domain.ExecutionEvent, n int) []domain.ExecutionEvent {
	t.Helper()
	var out []domain.ExecutionEvent
	timeout := time.After(waitLimit)
	for len(out) < n {
		select {
		case ev, ok := <-ch:
			require.True(t, ok, "the subscription ended after %d of %d events", len(out), n)
			out = append(out, ev)
		case <-timeout:
			t.Fatalf("received %d of %d events", len(out), n)
		}
	}
	return out
}

func labels(evs []domain.ExecutionEvent) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = label(ev)
	}
	return out
}

func seqs(evs []domain.ExecutionEvent) []int64 {
	out := make([]int64, len(evs))
	for i, ev := range evs {
		out[i] = ev.Record().Seq
	}
	return out
}

func span(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

func TestAppendNumbersPerProjectWithoutGaps(t *testing.T) {
	run(t, events.Options{}, func(t *testing.T, b *bundle) {
		other := b.newProject(t, "other")
		b.commit(t, event(b.project, 1), event(other, 1), event(b.project, 2))
		b.commit(t, event(b.project, 3))
		// A rolled-back transaction gives its numbers back.
		boom := errors.New("boom")
		err := b.db.InTx(b.ctx, func(q *store.Q) error {
			if err := q.Events.AppendEvents(b.ctx, []*domain.Event{event(b.project, 99)}); err != nil {
				return err
			}
			return boom
		})
		require.ErrorIs(t, err, boom)
		b.commit(t, event(b.project, 4), event(other, 2))

		for project, want := range map[string][]string{b.project: span(1, 4), other: span(1, 2)} {
			rows, err := b.db.Events.EventsAfter(b.ctx, project, 0, 0, nil, 100)
			require.NoError(t, err)
			var got []string
			for i, r := range rows {
				require.Equal(t, int64(i+1), r.Seq)
				ev, err := domain.DecodeEvent(r)
				require.NoError(t, err)
				got = append(got, label(ev))
			}
			require.Equal(t, want, got)
		}
	})
}

func TestSubscribeReplaysFromCursorThenStreams(t *testing.T) {
	run(t, events.Options{}, func(t *testing.T, b *bundle) {
		for i := 1; i <= 5; i++ {
			b.commit(t, event(b.project, i))
		}
		ctx, cancel := context.WithCancel(b.ctx)
		defer cancel()
		ch, err := b.broker.Subscribe(ctx, b.project, 2, nil, nil)
		require.NoError(t, err)
		require.Equal(t, span(3, 5), labels(receive(t, ch, 3)))
		b.commit(t, event(b.project, 6), event(b.project, 7))
		b.commit(t, event(b.project, 8))
		got := receive(t, ch, 3)
		require.Equal(t, span(6, 8), labels(got))
		require.Equal(t, []int64{6, 7, 8}, seqs(got))
		require.Equal(t, domain.EventCursor(b.project, 8), got[2].Record().Cursor())

		// From now on: only what commits later.
		fresh, err := b.broker.Subscribe(ctx, b.project, -1, nil, nil)
		require.NoError(t, err)
		b.commit(t, event(b.project, 9))
		require.Equal(t, []string{"9"}, labels(receive(t, fresh, 1)))
		require.Equal(t, []string{"9"}, labels(receive(t, ch, 1)))
	})
}

func TestTypesFilter(t *testing.T) {
	run(t, events.Options{PageSize: 2}, func(t *testing.T, b *bundle) {
		task := &domain.Task{ID: uuid.NewString(), ProjectID: b.project, Title: "t", Status: domain.StatusDraft}
		now := time.Now().UTC()
		status := func(to domain.TaskStatus) *domain.Event {
			return domain.NewTaskStatusChanged(task, domain.StatusDraft, to, "why", now)
		}
		b.commit(t, domain.NewTaskCreated(task, now), event(b.project, 1), event(b.project, 2), event(b.project, 3),
			status(domain.StatusPending), event(b.project, 4))
		ctx, cancel := context.WithCancel(b.ctx)
		defer cancel()
		only := []domain.ExecutionEventType{domain.EventTaskStatusChanged, domain.EventTaskCreated}
		// From the table (pages of 2), then from the window.
		ch, err := b.broker.Subscribe(ctx, b.project, 0, only, nil)
		require.NoError(t, err)
		got := receive(t, ch, 2)
		require.IsType(t, &domain.TaskCreated{}, got[0])
		require.Equal(t, "t", got[0].(*domain.TaskCreated).Title)
		sc := got[1].(*domain.TaskStatusChanged)
		require.Equal(t, domain.StatusPending, sc.To)
		require.Equal(t, "why", *sc.Reason)
		b.commit(t, event(b.project, 5), status(domain.StatusEvaluating))
		got = receive(t, ch, 1)
		require.Equal(t, domain.StatusEvaluating, got[0].(*domain.TaskStatusChanged).To)
		require.Equal(t, int64(8), got[0].Record().Seq)
	})
}

// TestHeldTransactionCannotBePassed is the cursor-safety test: a transaction
// that appended an event stays open while a later one tries to commit; the
// later one waits for the earlier one's sequence lock, and a subscriber gets
// both, in commit order, with nothing skipped.
func TestHeldTransactionCannotBePassed(t *testing.T) {
	run(t, events.Options{}, func(t *testing.T, b *bundle) {
		b.commit(t, event(b.project, 1))
		ctx, cancel := context.WithCancel(b.ctx)
		defer cancel()
		ch, err := b.broker.Subscribe(ctx, b.project, -1, nil, nil)
		require.NoError(t, err)

		appended, release := make(chan struct{}), make(chan struct{})
		firstDone := make(chan error, 1)
		go func() {
			firstDone <- b.db.InTx(b.ctx, func(q *store.Q) error {
				if err := q.Events.AppendEvents(b.ctx, []*domain.Event{event(b.project, 2)}); err != nil {
					return err
				}
				close(appended)
				<-release
				return nil
			})
		}()
		<-appended
		// The second transaction starts while the first holds its number.
		secondDone := make(chan error, 1)
		go func() {
			secondDone <- b.db.InTx(b.ctx, func(q *store.Q) error {
				return q.Events.AppendEvents(b.ctx, []*domain.Event{event(b.project, 3)})
			})
		}()
		if b.db.Dialect() == store.Postgres {
			// Wait until the second one is blocked on the first one's lock.
			waitFor(t, func() bool {
				var n int
				require.NoError(t, b.db.SQL().QueryRow(`SELECT COUNT(*) FROM pg_stat_activity
					WHERE wait_event_type = 'Lock' AND query LIKE '%event_sequences%'`).Scan(&n))
				return n > 0
			})
		}
		// Readers see neither while the first is open.
		b.broker.Published(b.project)
		rows, err := b.db.Events.EventsAfter(b.ctx, b.project, 1, 0, nil, 10)
		require.NoError(t, err)
		require.Empty(t, rows)
		select {
		case err := <-secondDone:
			t.Fatalf("the second transaction committed while the first held the sequence: %v", err)
		default:
		}

		close(release)
		require.NoError(t, <-firstDone)
		require.NoError(t, <-secondDone)
		b.broker.Published(b.project)
		got := receive(t, ch, 2)
		require.Equal(t, []string{"2", "3"}, labels(got))
		require.Equal(t, []int64{2, 3}, seqs(got))
	})
}

// TestConcurrentWritersDeliverEveryEventInOrder runs writers in parallel
// against a subscriber that joined before them: it receives 1…N, each once.
func TestConcurrentWritersDeliverEveryEventInOrder(t *testing.T) {
	run(t, events.Options{}, func(t *testing.T, b *bundle) {
		ctx, cancel := context.WithCancel(b.ctx)
		defer cancel()
		ch, err := b.broker.Subscribe(ctx, b.project, 0, nil, nil)
		require.NoError(t, err)
		const writers, each = 8, 25
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					ev := event(b.project, w*each+i)
					if err := b.db.InTx(b.ctx, func(q *store.Q) error { return q.Events.AppendEvents(b.ctx, []*domain.Event{ev}) }); err != nil {
						errs <- err
						return
					}
					b.broker.Published(b.project)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		got := receive(t, ch, writers*each)
		for i, ev := range got {
			require.Equal(t, int64(i+1), ev.Record().Seq)
		}
	})
}

// TestLaggingSubscriberIsClosedAndOthersAreNot: a subscriber that stops
// reading falls out of the window and is closed with the cursor of the last
// event it was handed; another subscriber gets everything; resubscribing from
// the cursor continues without a gap or a repeat.
func TestLaggingSubscriberIsClosedAndOthersAreNot(t *testing.T) {
	run(t, events.Options{Window: 4, Buffer: 1}, func(t *testing.T, b *bundle) {
		ctx, cancel := context.WithCancel(b.ctx)
		defer cancel()
		var lagErr error
		ended := make(chan struct{})
		slow, err := b.broker.Subscribe(ctx, b.project, 0, nil, func(err error) { lagErr = err; close(ended) })
		require.NoError(t, err)
		fast, err := b.broker.Subscribe(ctx, b.project, 0, nil, nil)
		require.NoError(t, err)

		const total = 40
		for i := 1; i <= total; i++ {
			b.commit(t, event(b.project, i))
			require.Equal(t, []string{fmt.Sprint(i)}, labels(receive(t, fast, 1)))
		}

		// The slow one reads what it was handed, then finds its stream closed.
		var got []domain.ExecutionEvent
		for ev := range slow {
			got = append(got, ev)
		}
		<-ended
		var lag *events.LagError
		require.ErrorAs(t, lagErr, &lag)
		require.NotEmpty(t, got)
		require.Less(t, len(got), total)
		require.Equal(t, span(1, len(got)), labels(got))
		require.Equal(t, got[len(got)-1].Record().Cursor(), lag.Cursor)

		_, from, err := domain.ParseEventCursor(lag.Cursor, "after")
		require.NoError(t, err)
		again, err := b.broker.Subscribe(ctx, b.project, from, nil, nil)
		require.NoError(t, err)
		require.Equal(t, span(len(got)+1, total), labels(receive(t, again, total-len(got))))
	})
}

// TestBurstLargerThanAPageReachesEveryone: one commit of more events than a
// page and than the buffer, but within the window, closes nobody.
func TestBurstWithinTheWindowClosesNobody(t *testing.T) {
	run(t, events.Options{Window: 300, PageSize: 50}, func(t *testing.T, b *bundle) {
		ctx, cancel := context.WithCancel(b.ctx)
		defer cancel()
		var subs []<-chan domain.ExecutionEvent
		for i := 0; i < 3; i++ {
			ch, err := b.broker.Subscribe(ctx, b.project, -1, nil, func(err error) { t.Errorf("subscriber closed: %v", err) })
			require.NoError(t, err)
			subs = append(subs, ch)
		}
		var burst []*domain.Event
		for i := 1; i <= 250; i++ {
			burst = append(burst, event(b.project, i))
		}
		b.commit(t, burst...)
		for _, ch := range subs {
			require.Equal(t, span(1, 250), labels(receive(t, ch, 250)))
		}
	})
}

func TestLastSubscriberStopsTheFeed(t *testing.T) {
	run(t, events.Options{}, func(t *testing.T, b *bundle) {
		for i := 0; i < 20; i++ {
			ctx, cancel := context.WithCancel(b.ctx)
			ch, err := b.broker.Subscribe(ctx, b.project, -1, nil, nil)
			require.NoError(t, err)
			b.commit(t, event(b.project, i))
			require.Equal(t, []string{fmt.Sprint(i)}, labels(receive(t, ch, 1)))
			cancel()
			for range ch { // closed once the subscriber is gone
			}
		}
		waitFor(t, func() bool { return b.broker.Feeds() == 0 })
		b.broker.Close()
		_, err := b.broker.Subscribe(b.ctx, b.project, -1, nil, nil)
		require.ErrorIs(t, err, events.ErrClosed)
	})
}

// TestListenerWakesOtherReplicas (PostgreSQL): a broker hears, through
// LISTEN/NOTIFY, events another process committed; after its listening
// connection is killed it reconnects and catches up from the table, with the
// poll far too slow to be what delivers them.
func TestListenerWakesOtherReplicas(t *testing.T) {
	url := testdb.Postgres(t)
	writer := setup(t, url, events.Options{})
	reader := events.NewBroker(openDB(t, url), events.Options{PollInterval: time.Hour, ReconnectMin: 10 * time.Millisecond})
	runCtx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { reader.Run(runCtx); close(ran) }()
	t.Cleanup(func() { stop(); <-ran })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := reader.Subscribe(ctx, writer.project, 0, nil, nil)
	require.NoError(t, err)
	waitFor(t, func() bool { return listeners(t, writer.db) > 0 })
	next := 1
	for round := 0; round < 5; round++ {
		writer.commit(t, event(writer.project, next))
		require.Equal(t, []string{fmt.Sprint(next)}, labels(receive(t, ch, 1)))
		next++
		// Kill the listener, write while it is gone, and expect the events.
		_, err := writer.db.SQL().Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, events.ListenerAppName)
		require.NoError(t, err)
		writer.commit(t, event(writer.project, next), event(writer.project, next+1))
		require.Equal(t, span(next, next+1), labels(receive(t, ch, 2)))
		next += 2
	}
}

func openDB(t *testing.T, url string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func listeners(t *testing.T, db *store.DB) int {
	var n int
	require.NoError(t, db.SQL().QueryRow(`SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = $1`, events.ListenerAppName).Scan(&n))
	return n
}

// waitFor polls cond until it holds (a hang guard of waitLimit).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRelayFlushesOnClose: a broker that closes while its relay gathers
// projects to notify still notifies the other replicas of every one.
func TestRelayFlushesOnClose(t *testing.T) {
	url := testdb.Postgres(t)
	b := setup(t, url, events.Options{})
	dsn, err := b.db.ListenerDSN("relay-test")
	require.NoError(t, err)
	l := pq.NewListener(dsn, 10*time.Millisecond, time.Second, nil)
	t.Cleanup(func() { _ = l.Close() })
	require.NoError(t, l.Listen(store.EventsChannel))

	want := map[string]bool{}
	for range 20 {
		p := uuid.NewString()
		want[p] = true
		b.broker.Published(p)
	}
	b.broker.Close()
	got := map[string]bool{}
	for len(got) < len(want) {
		select {
		case n := <-l.Notify:
			require.NotNil(t, n)
			got[n.Extra] = true
		case <-time.After(waitLimit):
			t.Fatalf("%d of %d projects notified", len(got), len(want))
		}
	}
	require.Equal(t, want, got)
}
