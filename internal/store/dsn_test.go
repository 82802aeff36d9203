package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

func TestPostgresDSNSendsArgumentsInOneRoundTrip(t *testing.T) {
	for url, want := range map[string]string{
		"postgres://u@h/db":                                "postgres://u@h/db?binary_parameters=yes",
		"postgres://u@h/db?sslmode=disable":                "postgres://u@h/db?binary_parameters=yes&sslmode=disable",
		"postgresql://u@h/db?binary_parameters=no&x=1":     "postgresql://u@h/db?binary_parameters=no&x=1",
		"postgres://u:p%40ss@h:5433/db?application_name=a": "postgres://u:p%40ss@h:5433/db?application_name=a&binary_parameters=yes",
	} {
		got, err := postgresDSN(url)
		if err != nil || got != want {
			t.Errorf("postgresDSN(%q) = %q, %v; want %q", url, got, err, want)
		}
	}
}

// TestCountersDoNotWaitForTheDisk: the display counters' pool commits
// without waiting for the disk; the main pool keeps the server's setting.
func TestCountersDoNotWaitForTheDisk(t *testing.T) {
	testdb.Run(t, func(t *testing.T, url string) {
		ctx := context.Background()
		d, err := Open(ctx, url)
		require.NoError(t, err)
		defer d.Close()
		if d.Dialect() != Postgres {
			require.Nil(t, d.counters)
			return
		}
		var counters, main string
		require.NoError(t, d.counters.GetContext(ctx, &counters, `SHOW synchronous_commit`))
		require.NoError(t, d.sqlx.GetContext(ctx, &main, `SHOW synchronous_commit`))
		require.Equal(t, "off", counters)
		require.Equal(t, "on", main)
	})
}
