package store_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

func TestNextDisplayNumber(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		other := b.newProject(t, "other")
		next := func(p *domain.Project, c domain.TaskCategory) int {
			n, err := b.db.Tasks.NextDisplayNumber(b.ctx, p.ID, c)
			require.NoError(t, err)
			return n
		}
		require.Equal(t, 1, next(b.project, domain.CategoryBug))
		require.Equal(t, 2, next(b.project, domain.CategoryBug))
		require.Equal(t, 1, next(b.project, domain.CategoryFeature), "counters are per category")
		require.Equal(t, 1, next(other, domain.CategoryBug), "counters are per project")
		require.Equal(t, 3, next(b.project, domain.CategoryBug))

		// takeRolledBack takes a number with take in a transaction that rolls back.
		takeRolledBack := func(take func(*store.Q) func(context.Context, string, domain.TaskCategory) (int, error)) int {
			var n int
			_ = b.db.InTx(b.ctx, func(q *store.Q) error {
				var err error
				n, err = take(q)(b.ctx, b.project.ID, domain.CategoryBug)
				require.NoError(t, err)
				return errors.New("rollback")
			})
			return n
		}
		// a number taken in a rolled-back transaction is given again; a committed one never
		require.Equal(t, 4, takeRolledBack(func(q *store.Q) func(context.Context, string, domain.TaskCategory) (int, error) {
			return q.Tasks.NextDisplayNumber
		}))
		require.Equal(t, 4, next(b.project, domain.CategoryBug))

		// one taken at once is never given again on PostgreSQL; on SQLite it
		// is the transaction's
		require.Equal(t, 5, takeRolledBack(func(q *store.Q) func(context.Context, string, domain.TaskCategory) (int, error) {
			return q.Tasks.TakeDisplayNumber
		}))
		want := 6
		if b.db.Dialect() == store.SQLite {
			want = 5
		}
		require.Equal(t, want, next(b.project, domain.CategoryBug))
	})
}

func TestNextDisplayNumberConcurrent(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		const workers = 20
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			got  []int
			errs []error
		)
		start := make(chan struct{})
		for i := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				err := b.db.InTx(b.ctx, func(q *store.Q) error {
					take := q.Tasks.NextDisplayNumber // half of them in turns, half at once
					if i%2 == 0 {
						take = q.Tasks.TakeDisplayNumber
					}
					n, err := take(b.ctx, b.project.ID, domain.CategoryFeature)
					if err != nil {
						return err
					}
					mu.Lock()
					got = append(got, n)
					mu.Unlock()
					return nil
				})
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
		close(start)
		wg.Wait()
		require.Empty(t, errs)
		sort.Ints(got)
		want := make([]int, workers)
		for i := range want {
			want[i] = i + 1
		}
		require.Equal(t, want, got)
	})
}
