package loader_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/loader"
)

var errDown = errors.New("down")

// gated is a fetch that records its keys and, once started, waits for its
// gate: reads and loads can be made to overlap it.
type gated struct {
	recorder
	started chan struct{}
	gate    chan struct{}
	panics  bool
}

func newGated() *gated {
	return &gated{started: make(chan struct{}, 16), gate: make(chan struct{})}
}

func (g *gated) fetch(ctx context.Context, keys []int) (map[int]int, error) {
	g.started <- struct{}{}
	<-g.gate
	if g.panics {
		panic("fetch failed")
	}
	return g.recorder.fetch(ctx, keys)
}

// TestReadsShareAFetch: a key another Read is fetching is not fetched
// again — neither by a second Read (the fields of one level share a
// loader) nor by a Load — and a key twice in one Read is fetched once.
func TestReadsShareAFetch(t *testing.T) {
	tr := loader.NewTracker()
	g := newGated()
	l := loader.New(loader.Timing{Idle: time.Hour, MaxWait: time.Hour, Tracker: tr}, g.fetch)
	ctx := context.Background()
	var wg sync.WaitGroup
	var first, second []int
	wg.Go(func() {
		var err error
		first, err = l.Read(ctx, []int{1, 2, 2, 3})
		require.NoError(t, err)
	})
	<-g.started // the first Read is fetching 1, 2 and 3
	wg.Go(func() {
		var err error
		second, err = l.Read(ctx, []int{3, 4, 1})
		require.NoError(t, err)
	})
	<-g.started // the second fetches only 4
	tr.Promise(1)
	wg.Go(func() {
		defer tr.Done()
		v, err := l.Load(ctx, 2)
		require.NoError(t, err)
		require.Equal(t, 4, v)
	})
	time.Sleep(20 * time.Millisecond) // the load finds 2 being read, and waits
	close(g.gate)
	wg.Wait()
	require.Equal(t, []int{1, 4, 4, 9}, first)
	require.Equal(t, []int{9, 16, 1}, second)
	require.ElementsMatch(t, [][]int{{1, 2, 3}, {4}}, g.batches, "each key fetched once")
	require.LessOrEqual(t, tr.Waits(), int64(1), "the load woke once, if it waited")
	quiet, timed := tr.Closed()
	require.Zero(t, quiet+timed, "no batch")
}

// TestReadFailureReachesItsWaiters: what waits on a Read's keys gets its
// error, or an error when its fetch panicked: nothing waits for ever.
func TestReadFailureReachesItsWaiters(t *testing.T) {
	for _, panics := range []bool{false, true} {
		g := newGated()
		g.panics = panics
		if !panics {
			g.err = errDown
		}
		l := loader.New(loader.Timing{Idle: time.Hour, MaxWait: time.Hour}, g.fetch)
		ctx := context.Background()
		var wg sync.WaitGroup
		wg.Go(func() {
			defer func() { _ = recover() }()
			_, err := l.Read(ctx, []int{1})
			require.ErrorIs(t, err, errDown)
		})
		<-g.started
		waited := make(chan error, 1)
		wg.Go(func() {
			_, err := l.Read(ctx, []int{1})
			waited <- err
		})
		time.Sleep(10 * time.Millisecond) // the second Read finds 1 being read
		close(g.gate)
		wg.Wait()
		require.Error(t, <-waited, "panics=%v", panics)
		_, err := l.Load(ctx, 1)
		require.Error(t, err, "the failure stays cached, as a batch's does")
	}
}
