package main

import (
	"strings"
	"testing"
)

func TestSummaryPrintsFailuresAndGroupsSkips(t *testing.T) {
	stream := strings.Join([]string{
		`{"Action":"run","Package":"example.com/o/n/cmd/x","Test":"TestOK"}`,
		`{"Action":"output","Package":"example.com/o/n/cmd/x","Test":"TestOK","Output":"=== RUN   TestOK\n"}`,
		`{"Action":"output","Package":"example.com/o/n/cmd/x","Test":"TestOK","Output":"    quiet line of a passing test\n"}`,
		`{"Action":"pass","Package":"example.com/o/n/cmd/x","Test":"TestOK"}`,
		`{"Action":"output","Package":"example.com/o/n/cmd/x","Test":"TestA/postgres","Output":"=== RUN   TestA/postgres\n"}`,
		`{"Action":"output","Package":"example.com/o/n/cmd/x","Test":"TestA/postgres","Output":"    testdb.go:56: PostgreSQL: TASKGRAPH_TEST_DATABASE_URL is not set\n"}`,
		`{"Action":"output","Package":"example.com/o/n/cmd/x","Test":"TestA/postgres","Output":"--- SKIP: TestA/postgres (0.00s)\n"}`,
		`{"Action":"skip","Package":"example.com/o/n/cmd/x","Test":"TestA/postgres"}`,
		`{"Action":"output","Package":"example.com/o/n/cmd/x","Test":"TestB/postgres","Output":"    testdb.go:56: PostgreSQL: TASKGRAPH_TEST_DATABASE_URL is not set\n"}`,
		`{"Action":"skip","Package":"example.com/o/n/cmd/x","Test":"TestB/postgres"}`,
		`{"Action":"output","Package":"example.com/o/n/cmd/x","Test":"TestBrowser","Output":"    e2e.go:35: chromium is not installed\n"}`,
		`{"Action":"skip","Package":"example.com/o/n/cmd/x","Test":"TestBrowser"}`,
		`{"Action":"output","Package":"example.com/o/n/cmd/x","Test":"TestBad","Output":"    bad_test.go:9: want 1, got 2\n"}`,
		`{"Action":"fail","Package":"example.com/o/n/cmd/x","Test":"TestBad"}`,
		`{"Action":"output","Package":"example.com/o/n/cmd/x","Output":"FAIL\texample.com/o/n/cmd/x\t1.0s\n"}`,
		`{"Action":"fail","Package":"example.com/o/n/cmd/x"}`,
	}, "\n")
	var out strings.Builder
	if run(strings.NewReader(stream), &out) {
		t.Fatal("a run with a failed test passed")
	}
	got := out.String()
	for _, want := range []string{
		"want 1, got 2",               // a failing test's output is shown
		"FAIL\texample.com/o/n/cmd/x", // the package line
		"   2  PostgreSQL: TASKGRAPH_TEST_DATABASE_URL is not set", // grouped by reason
		"TestA/postgres (cmd/x), TestB/postgres (cmd/x)",
		"   1  chromium is not installed",
		"FAILED — 1 tests, 1 packages",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "quiet line of a passing test") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
}

func TestSummaryOfACleanRunPasses(t *testing.T) {
	var out strings.Builder
	stream := `{"Action":"pass","Package":"example.com/o/n/x","Test":"TestOK"}` + "\n" +
		`{"Action":"output","Package":"example.com/o/n/x","Output":"ok  \texample.com/o/n/x\t0.1s\n"}`
	if !run(strings.NewReader(stream), &out) {
		t.Fatalf("a clean run failed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "SKIPPED — nothing") {
		t.Errorf("no closing summary:\n%s", out.String())
	}
}
