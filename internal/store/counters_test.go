package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/store"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestCountersDoNotWaitForTheDisk: the display counters' pool commits
// without waiting for the disk; the main pool keeps the server's setting.
func TestCountersDoNotWaitForTheDisk(t *testing.T) {
	testdb.Run(t, func(t *testing.T, url string) {
		ctx := context.Background()
		d, err := store.Open(ctx, url)
		require.NoError(t, err)
		defer d.Close()
		main, counters, err := d.SynchronousCommit(ctx)
		require.NoError(t, err)
		if d.Dialect() != store.Postgres {
			return
		}
		require.Equal(t, "off", counters)
		require.Equal(t, "on", main)
	})
}
