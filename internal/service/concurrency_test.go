package service_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

func TestCreateTaskConcurrentDisplayIDs(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		const workers = 20
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			ids   []string
			errs  []error
			start = make(chan struct{})
		)
		for i := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				task, err := b.svc.Tasks.CreateTask(as(b.owner), domain.CreateTaskInput{ProjectID: b.project.GlobalID(),
					Title: fmt.Sprintf("parallel %d", i), Category: ptr(domain.CategoryFeature)})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				ids = append(ids, task.DisplayID)
			}()
		}
		close(start)
		wg.Wait()
		require.Empty(t, errs)
		sort.Strings(ids)
		want := make([]string, workers)
		for i := range want {
			want[i] = fmt.Sprintf("TU-WEBAPP-FEA-%03d", i+1)
		}
		require.Equal(t, want, ids)

		page, err := b.svc.Tasks.ListTasks(as(b.owner), ptr(b.project.GlobalID()), service_TasksArgs())
		require.NoError(t, err)
		require.Len(t, page.Items, workers)
		next := b.createTask("after", func(in *domain.CreateTaskInput) { in.Category = ptr(domain.CategoryFeature) })
		require.Equal(t, "TU-WEBAPP-FEA-021", next.DisplayID)
	})
}

// Two links that each close a cycle only together: whoever commits second must
// see the first (the store serialises cycle checks per project).
func TestConcurrentLinksCannotFormACycle(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		for round := range 5 {
			a, c := b.createTask(fmt.Sprintf("a%d", round)), b.createTask(fmt.Sprintf("c%d", round))
			var wg sync.WaitGroup
			errs := make([]error, 2)
			start := make(chan struct{})
			for i, pair := range [][2]*domain.Task{{a, c}, {c, a}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, errs[i] = b.link(pair[0], pair[1], domain.RelDependsOn)
				}()
			}
			close(start)
			wg.Wait()
			var ok, cycles int
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case domain.ErrorCode(err) == domain.CodeCycleDetected:
					cycles++
				default:
					t.Fatalf("round %d: unexpected error %v", round, err)
				}
			}
			require.Equal(t, 1, ok, "round %d: exactly one link is made", round)
			require.Equal(t, 1, cycles, "round %d: the other closes a cycle", round)

			rels, err := b.svc.Tasks.Relationships(as(b.owner), a.ID, domain.DirectionBoth, []domain.RelationshipType{domain.RelDependsOn})
			require.NoError(t, err)
			require.Len(t, rels, 1)
			waits := b.reload(a).BlocksCount + b.reload(c).BlocksCount
			require.Equal(t, 1, waits, "blocks counts match the one link")
		}
	})
}

// Replicas starting together on an empty database all bootstrap the admin: none
// may fail, and one admin (and, without a given token, one printed token) results.
func TestBootstrapAdminConcurrent(t *testing.T) {
	for _, token := range []string{"given-token", ""} {
		t.Run(fmt.Sprintf("token=%q", token), func(t *testing.T) {
			testdb.Run(t, func(t *testing.T, url string) {
				db, svc, _ := newService(t, url)
				use := token
				const replicas = 4
				var wg sync.WaitGroup
				printed := make([]string, replicas)
				errs := make([]error, replicas)
				start := make(chan struct{})
				for i := range replicas {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						printed[i], errs[i] = svc.Accounts.BootstrapAdmin(context.Background(), token)
					}()
				}
				close(start)
				wg.Wait()
				for _, err := range errs {
					require.NoError(t, err)
				}
				var shown []string
				for _, p := range printed {
					if p != "" {
						shown = append(shown, p)
					}
				}
				if token == "" {
					require.Len(t, shown, 1, "one replica prints the token")
					use = shown[0]
				} else {
					require.Empty(t, shown)
				}
				n, err := db.Users.CountUsers(context.Background())
				require.NoError(t, err)
				require.Equal(t, 1, n)
				p, err := svc.Accounts.Authenticate(context.Background(), use)
				require.NoError(t, err)
				require.NotNil(t, p)
				require.Equal(t, domain.RoleAdmin, p.Role)
			})
		})
	}
}
