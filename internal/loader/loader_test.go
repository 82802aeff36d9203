package loader_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/loader"
)

// recorder is a fetch that records its batches and squares its keys; key 0 is
// never found.
type recorder struct {
	mu      sync.Mutex
	batches [][]int
	err     error
}

func (r *recorder) fetch(_ context.Context, keys []int) (map[int]int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := append([]int(nil), keys...)
	sort.Ints(b)
	r.batches = append(r.batches, b)
	if r.err != nil {
		return nil, r.err
	}
	out := map[int]int{}
	for _, k := range keys {
		if k != 0 {
			out[k] = k * k
		}
	}
	return out, nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.batches)
}

var slow = loader.Timing{Idle: 20 * time.Millisecond, MaxWait: 5 * time.Second}

func TestConcurrentLoadsShareOneBatch(t *testing.T) {
	rec := &recorder{}
	l := loader.New(slow, rec.fetch)
	var wg sync.WaitGroup
	got := make([]int, 100)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := l.Load(context.Background(), i)
			require.NoError(t, err)
			got[i] = v
		}()
	}
	wg.Wait()
	require.Equal(t, 1, rec.count())
	require.Len(t, rec.batches[0], 100)
	for i, v := range got {
		require.Equal(t, i*i, v, "key %d", i) // key 0 is missing: zero value
	}
}

func TestBatchStaysOpenWhileKeysKeepArriving(t *testing.T) {
	rec := &recorder{}
	l := loader.New(loader.Timing{Idle: 30 * time.Millisecond, MaxWait: 10 * time.Second}, rec.fetch)
	results := make(chan int, 5)
	for i := 1; i <= 5; i++ {
		go func() {
			v, _ := l.Load(context.Background(), i)
			results <- v
		}()
		time.Sleep(5 * time.Millisecond) // keys arrive 5ms apart, well inside the idle window
	}
	for range 5 {
		<-results
	}
	require.Equal(t, [][]int{{1, 2, 3, 4, 5}}, rec.batches)
}

func TestMaxKeysClosesABatchEarly(t *testing.T) {
	rec := &recorder{}
	l := loader.New(loader.Timing{Idle: time.Hour, MaxWait: time.Hour, MaxKeys: 3}, rec.fetch)
	vals, err := l.LoadMany(context.Background(), []int{1, 2, 3})
	require.NoError(t, err)
	require.Equal(t, []int{1, 4, 9}, vals)
	require.Equal(t, 1, rec.count())
}

func TestCacheAndClear(t *testing.T) {
	rec := &recorder{}
	l := loader.New(loader.Timing{Idle: time.Millisecond}, rec.fetch)
	ctx := context.Background()
	_, err := l.Load(ctx, 2)
	require.NoError(t, err)
	_, err = l.LoadMany(ctx, []int{2, 2})
	require.NoError(t, err)
	require.Equal(t, 1, rec.count(), "cached within the request")
	l.Clear()
	_, err = l.Load(ctx, 2)
	require.NoError(t, err)
	require.Equal(t, 2, rec.count(), "fetched again after Clear")
}

func TestGetFetchesAtOnceAndPrimes(t *testing.T) {
	rec := &recorder{}
	l := loader.New(loader.Timing{Idle: time.Hour, MaxWait: time.Hour}, rec.fetch)
	v, err := l.Get(context.Background(), 3)
	require.NoError(t, err)
	require.Equal(t, 9, v)
	v, err = l.Load(context.Background(), 3) // would wait an hour if not cached
	require.NoError(t, err)
	require.Equal(t, 9, v)
	require.Equal(t, 1, rec.count())
}

func TestPrime(t *testing.T) {
	rec := &recorder{}
	l := loader.New(loader.Timing{Idle: time.Millisecond}, rec.fetch)
	ctx := context.Background()
	l.Prime(4, 100)
	got, err := l.LoadMany(ctx, []int{4, 4})
	require.NoError(t, err)
	require.Equal(t, []int{100, 100}, got)
	require.Zero(t, rec.count(), "a primed key costs no fetch")

	v, err := l.Load(ctx, 5)
	require.NoError(t, err)
	l.Prime(5, -1)
	got2, err := l.Load(ctx, 5)
	require.NoError(t, err)
	require.Equal(t, v, got2, "priming does not overwrite a loaded key")
	require.Equal(t, 1, rec.count())
}

func TestErrorsReachEveryKeyOfTheBatch(t *testing.T) {
	boom := errors.New("boom")
	rec := &recorder{err: boom}
	l := loader.New(loader.Timing{Idle: time.Millisecond}, rec.fetch)
	_, err := l.LoadMany(context.Background(), []int{1, 2})
	require.ErrorIs(t, err, boom)
	_, err = l.Get(context.Background(), 5)
	require.ErrorIs(t, err, boom)
}

func TestCancelledWaiterReturnsAndOthersStillLoad(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	l := loader.New(loader.Timing{Idle: 50 * time.Millisecond}, func(ctx context.Context, keys []int) (map[int]int, error) {
		calls.Add(1)
		<-release
		require.NoError(t, ctx.Err(), "a cancelled first caller does not cancel the batch")
		return map[int]int{1: 1, 2: 2}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := l.Load(ctx, 1); errc <- err }()
	other := make(chan int, 1)
	go func() { v, _ := l.Load(context.Background(), 2); other <- v }()
	time.Sleep(10 * time.Millisecond)
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	close(release)
	require.Equal(t, 2, <-other)
	require.Equal(t, int32(1), calls.Load())
}

// TestTrackedLevelsCloseOnQuiescence: 100 promised workers load a key each
// from a first loader, then one from a second: each level is one batch,
// closed when the last worker waits, never by a timer.
func TestTrackedLevelsCloseOnQuiescence(t *testing.T) {
	tr := loader.NewTracker()
	first, second := &recorder{}, &recorder{}
	timing := loader.Timing{Idle: time.Hour, MaxWait: time.Hour, Tracker: tr}
	a, b := loader.New(timing, first.fetch), loader.New(timing, second.fetch)
	const n = 100
	tr.Promise(n)
	var wg sync.WaitGroup
	got := make([]int, n)
	for i := 1; i <= n; i++ {
		wg.Go(func() {
			defer tr.Done()
			v, err := a.Load(context.Background(), i)
			require.NoError(t, err)
			w, err := b.Load(context.Background(), v+1)
			require.NoError(t, err)
			got[i-1] = w
		})
	}
	wg.Wait()
	require.Equal(t, 1, first.count())
	require.Equal(t, 1, second.count())
	require.Len(t, first.batches[0], n)
	require.Len(t, second.batches[0], n)
	for i, w := range got {
		require.Equal(t, ((i+1)*(i+1)+1)*((i+1)*(i+1)+1), w)
	}
	quiet, timed := tr.Closed()
	require.Equal(t, int64(2), quiet)
	require.Zero(t, timed)
	require.False(t, tr.Abandoned())
}

// TestReadFetchesAtOnceAndCaches: Read fetches the keys not cached, in one
// fetch, without a batch or a wait, even under a tracker with work promised
// (a level read runs while the executor's promised fields below it wait for
// it); later Loads find the values ready and wait for nothing.
func TestReadFetchesAtOnceAndCaches(t *testing.T) {
	tr := loader.NewTracker()
	rec := &recorder{}
	timing := loader.Timing{Idle: time.Hour, MaxWait: time.Hour, MaxKeys: 3, Tracker: tr}
	a := loader.New(timing, rec.fetch)
	ctx := context.Background()
	tr.Promise(5) // work that cannot start before the read returns
	v, err := a.Get(ctx, 2)
	require.NoError(t, err)
	require.Equal(t, 4, v)
	got, err := a.Read(ctx, []int{1, 2, 3, 0, 4})
	require.NoError(t, err)
	require.Equal(t, []int{1, 4, 9, 0, 16}, got)
	// 2 was cached; the other four in fetches of at most MaxKeys.
	require.Equal(t, [][]int{{2}, {0, 1, 3}, {4}}, rec.batches)
	for _, k := range []int{1, 3, 4} {
		v, err := a.Load(ctx, k)
		require.NoError(t, err)
		require.Equal(t, k*k, v)
	}
	require.Equal(t, 3, rec.count(), "the loads found their keys read")
	require.Zero(t, tr.Waits())
	quiet, timed := tr.Closed()
	require.Zero(t, quiet+timed, "no batch")

	failing := &recorder{err: errors.New("down")}
	_, err = loader.New(timing, failing.fetch).Read(ctx, []int{1})
	require.ErrorContains(t, err, "down")
}

// TestTrackedWaitersOfOneKey: several workers waiting on one key all wake,
// and are all counted back in (the next level still closes at once).
func TestTrackedWaitersOfOneKey(t *testing.T) {
	tr := loader.NewTracker()
	rec, next := &recorder{}, &recorder{}
	timing := loader.Timing{Tracker: tr}
	a, b := loader.New(timing, rec.fetch), loader.New(timing, next.fetch)
	tr.Promise(10)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			defer tr.Done()
			_, err := a.Load(context.Background(), 7)
			require.NoError(t, err)
			_, err = b.Load(context.Background(), i+1)
			require.NoError(t, err)
		})
	}
	wg.Wait()
	require.Equal(t, [][]int{{7}}, rec.batches)
	require.Equal(t, 1, next.count())
	_, timed := tr.Closed()
	require.Zero(t, timed)
}

// TestTrackerAbandonsOnUnpromisedWork: Done without a promise means the
// bookkeeping is wrong; the tracker gives up and batches close on timers.
func TestTrackerAbandonsOnUnpromisedWork(t *testing.T) {
	tr := loader.NewTracker()
	tr.Done()
	require.True(t, tr.Abandoned())
	rec := &recorder{}
	l := loader.New(loader.Timing{Tracker: tr}, rec.fetch)
	v, err := l.Load(context.Background(), 3)
	require.NoError(t, err)
	require.Equal(t, 9, v)
	quiet, timed := tr.Closed()
	require.Zero(t, quiet+timed, "an abandoned tracker's batches close on the idle window")
}

// TestTrackedWaiterCanceled: a waiter whose request is canceled while its
// batch is being fetched goes back into the count by itself; the fetch's end
// does not count it again, and the tracker's count never goes below zero.
func TestTrackedWaiterCanceled(t *testing.T) {
	tr := loader.NewTracker()
	fetching, release := make(chan struct{}), make(chan struct{})
	l := loader.New(loader.Timing{Tracker: tr}, func(ctx context.Context, keys []int) (map[int]int, error) {
		close(fetching)
		<-release
		return map[int]int{keys[0]: 1}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	tr.Promise(1)
	done := make(chan error)
	go func() {
		defer tr.Done()
		_, err := l.Load(ctx, 1)
		done <- err
	}()
	<-fetching // the only worker waits: its batch closed and is being fetched
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	close(release)
	require.Eventually(t, func() bool { q, _ := tr.Closed(); return q == 1 }, 5*time.Second, time.Millisecond)
	require.False(t, tr.Abandoned(), "the canceled waiter was counted out twice")
	tr.Promise(1)
	tr.Done()
	require.False(t, tr.Abandoned())
}
