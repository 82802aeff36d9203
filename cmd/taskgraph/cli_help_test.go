package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every command's -h/--help prints its usage and succeeds; a mistyped flag is
// a usage error. agent -h documents what the command sees and may print.
func TestCLIHelpSucceeds(t *testing.T) {
	ctx := context.Background()
	for _, cmd := range [][]string{{"serve"}, {"migrate", "up"}, {"token", "create"}, {"watch"}, {"agent"}, {"worker"}, {"demo"}, {"mcp"}} {
		for _, h := range []string{"-h", "--help"} {
			var errOut strings.Builder
			args := append(append([]string{}, cmd...), h)
			require.ErrorIs(t, run(ctx, args, io.Discard, &errOut), errHelp, "%v", args)
			require.Contains(t, errOut.String(), "-", "%v printed no flags", args)
		}
		args := append(append([]string{}, cmd...), "--no-such-flag")
		require.ErrorIs(t, run(ctx, args, io.Discard, io.Discard), errUsage, "%v", args)
	}
	var errOut strings.Builder
	require.ErrorIs(t, run(ctx, []string{"agent", "--help"}, io.Discard, &errOut), errHelp)
	for _, want := range []string{"::progress", "::step", "::lesson", "TASKGRAPH_TASK_FILE", "exit status", "exits 0 when the run is finished"} {
		require.Contains(t, errOut.String(), want)
	}
}
