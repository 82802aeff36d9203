package main

import (
	"os"
	"testing"
)

// envExecMain makes the test binary run as the taskgraph command itself
// (main with os.Args): tests start the real server as a separate process,
// one they can SIGKILL, without building a second binary.
const envExecMain = "TASKGRAPH_TEST_EXEC_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envExecMain) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
