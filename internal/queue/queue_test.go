package queue_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/queue"
	"github.com/taskgraph/taskgraph/internal/routing"
	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// clock is the queue's time, moved by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now(context.Context, *store.Q) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now, nil
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type bundle struct {
	db             *store.DB
	q              *queue.Service
	clock          *clock
	admin, owner   *auth.Principal
	agentA, agentB *auth.Principal // two AGENT tokens of the owner's project
	worker         string          // a worker's global id
}

func setup(t *testing.T, url string) *bundle {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, db.Migrate(ctx))
	clk := &clock{now: time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)}
	run := app.NewRunner(db, nil)
	b := &bundle{db: db, clock: clk, q: queue.New(db, run, queue.Options{Now: clk.Now})}
	user := func(slug string, role domain.Role) *auth.Principal {
		u := &domain.User{ID: uuid.NewString(), Slug: slug, Name: slug, Email: slug + "@example.com",
			Settings: domain.JSON(`{}`), CreatedAt: clk.now, UpdatedAt: clk.now}
		require.NoError(t, db.Users.CreateUser(ctx, u))
		return &auth.Principal{UserID: u.ID, TokenID: uuid.NewString(), Role: role}
	}
	b.admin = user("root", domain.RoleAdmin)
	b.owner = user("owner", domain.RoleMember)
	project := &domain.Project{ID: uuid.NewString(), Slug: "web-app", Name: "Web app", OwnerID: b.owner.UserID,
		Status: domain.ProjectActive, CreatedAt: clk.now, UpdatedAt: clk.now}
	require.NoError(t, db.Projects.CreateProject(ctx, project))
	b.agentA = &auth.Principal{UserID: b.owner.UserID, TokenID: uuid.NewString(), Role: domain.RoleAgent, ProjectID: &project.ID}
	b.agentB = &auth.Principal{UserID: b.owner.UserID, TokenID: uuid.NewString(), Role: domain.RoleAgent, ProjectID: &project.ID}
	rt := routing.New(db, run, routing.Options{})
	pl, err := rt.CreatePlanner(as(b.owner), domain.CreatePlannerInput{ProjectID: project.GlobalID(), UserQuestion: "q", Model: "m"})
	require.NoError(t, err)
	w, err := rt.CreateWorker(as(b.owner), domain.CreateWorkerInput{PlannerID: pl.GlobalID(), TaskDescription: "t"})
	require.NoError(t, err)
	b.worker = w.GlobalID()
	return b
}

func each(t *testing.T, f func(t *testing.T, b *bundle)) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) { f(t, setup(t, url)) })
}

func as(p *auth.Principal) context.Context { return auth.WithPrincipal(context.Background(), p) }

func ptr[T any](v T) *T { return &v }

func requireCode(t *testing.T, err error, code domain.Code) *domain.Error {
	t.Helper()
	require.Error(t, err)
	e, ok := domain.AsError(err)
	require.True(t, ok, "not a domain error: %v", err)
	require.Equal(t, code, e.Code, "%v", err)
	return e
}

func (b *bundle) register(t *testing.T, name string, attempts, lease int) {
	t.Helper()
	_, err := b.q.RegisterFunction(as(b.admin), domain.RegisterQueueFunctionInput{Name: name, MaxAttempts: &attempts, LeaseSeconds: &lease})
	require.NoError(t, err)
}

func (b *bundle) enqueue(t *testing.T, name string) *domain.QueueItem {
	t.Helper()
	it, dedup, err := b.q.Enqueue(as(b.owner), domain.EnqueueFunctionInput{EntityType: domain.QueueEntityWorker,
		EntityID: b.worker, FunctionName: name})
	require.NoError(t, err)
	require.False(t, dedup)
	return it
}

func (b *bundle) claim(t *testing.T, p *auth.Principal, name string) *domain.QueueItem {
	t.Helper()
	items, err := b.q.Claim(as(p), domain.ClaimQueueItemsInput{FunctionNames: []string{name}, WorkerName: "w"})
	require.NoError(t, err)
	if len(items) == 0 {
		return nil
	}
	return items[0]
}

// TestBackoffSchedule: retries are due attempt⁴ seconds after each failure;
// the last attempt's failure is FAILED with every error kept.
func TestBackoffSchedule(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		b.register(t, "f", 4, 30)
		it := b.enqueue(t, "f")
		for attempt := 1; attempt <= 4; attempt++ {
			got := b.claim(t, b.agentA, "f")
			require.NotNil(t, got, "attempt %d due", attempt)
			require.Equal(t, attempt, got.Attempt)
			failed, err := b.q.Fail(as(b.agentA), domain.FailQueueItemInput{ID: it.GlobalID(), Error: fmt.Sprintf("e%d", attempt)})
			require.NoError(t, err)
			require.Len(t, failed.Errors, attempt)
			if attempt == 4 {
				require.Equal(t, domain.QueueFailed, failed.Status)
				break
			}
			require.Equal(t, domain.QueuePending, failed.Status)
			backoff := time.Duration(attempt*attempt*attempt*attempt) * time.Second
			require.Equal(t, b.clock.now.Add(backoff), failed.ScheduledAt)
			b.clock.Advance(backoff - time.Millisecond)
			require.Nil(t, b.claim(t, b.agentA, "f"), "not due a millisecond early")
			b.clock.Advance(time.Millisecond)
		}
		stored, err := b.db.Queue.ItemsByIDs(context.Background(), []string{it.ID})
		require.NoError(t, err)
		require.Equal(t, domain.QueueFailed, stored[0].Status)
		require.Equal(t, []string{"e1", "e2", "e3", "e4"}, messages(stored[0].Errors))
	})
}

func messages(es domain.QueueErrors) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Message)
	}
	return out
}

// TestLeaseFencing: only the claimer's current, unexpired lease extends,
// completes or fails; the sweep rescues expired leases once and never touches
// final items.
func TestLeaseFencing(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		b.register(t, "f", 3, 10)
		it := b.enqueue(t, "f")
		require.NotNil(t, b.claim(t, b.agentA, "f"))
		_, err := b.q.Extend(as(b.agentB), domain.ExtendQueueLeaseInput{ID: it.GlobalID()})
		requireCode(t, err, domain.CodeLeaseLost)
		b.clock.Advance(9 * time.Second)
		ext, err := b.q.Extend(as(b.agentA), domain.ExtendQueueLeaseInput{ID: it.GlobalID(), Attempt: ptr(1)})
		require.NoError(t, err)
		require.Equal(t, b.clock.now.Add(10*time.Second), *ext.LeaseExpiresAt)
		n, err := b.q.Sweep(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "an extended lease is not rescued")
		b.clock.Advance(11 * time.Second)
		_, err = b.q.Complete(as(b.agentA), domain.CompleteQueueItemInput{ID: it.GlobalID()})
		requireCode(t, err, domain.CodeLeaseLost) // expired, even before the sweep
		n, err = b.q.Sweep(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		n, err = b.q.Sweep(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "rescued once")

		b.clock.Advance(time.Second)
		again := b.claim(t, b.agentA, "f")
		require.Equal(t, 2, again.Attempt)
		_, err = b.q.Fail(as(b.agentA), domain.FailQueueItemInput{ID: it.GlobalID(), Attempt: ptr(1), Error: "late"})
		requireCode(t, err, domain.CodeLeaseLost)
		done, err := b.q.Complete(as(b.agentA), domain.CompleteQueueItemInput{ID: it.GlobalID(), Attempt: ptr(2), Result: domain.JSON(`{"ok":true}`)})
		require.NoError(t, err)
		require.Equal(t, domain.QueueCompleted, done.Status)
		require.Equal(t, []string{domain.LeaseExpiredMessage}, messages(done.Errors))
		b.clock.Advance(time.Hour)
		n, err = b.q.Sweep(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		_, err = b.q.Cancel(as(b.owner), domain.CancelQueueItemInput{ID: it.GlobalID()})
		requireCode(t, err, domain.CodeInvalidTransition)
	})
}

// TestClaimConcurrency: concurrent claimers on one database never share an item.
func TestClaimConcurrency(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		b.register(t, "f", 3, 60)
		const items = 40
		for range items {
			b.enqueue(t, "f")
		}
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := b.agentA
				if i%2 == 1 {
					p = b.agentB
				}
				for {
					got, err := b.q.Claim(as(p), domain.ClaimQueueItemsInput{FunctionNames: []string{"f"}, WorkerName: "w", Limit: ptr(3)})
					if !assertNoError(t, err) || len(got) == 0 {
						return
					}
					mu.Lock()
					for _, it := range got {
						seen[it.ID]++
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		require.Len(t, seen, items)
		for id, n := range seen {
			require.Equal(t, 1, n, id)
		}
	})
}

func assertNoError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Errorf("claim: %v", err)
		return false
	}
	return true
}
