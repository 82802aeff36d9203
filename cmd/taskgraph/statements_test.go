package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// nestedQuery is the query issue 2 measures: project -> tasks -> relationships ->
// target -> fileImpacts.
const nestedQuery = `query($slug: String!) {
  project(slug: $slug) {
    tasks(first: 100) {
      nodes {
        id displayId
        relationships { type target { id displayId fileImpacts { filePath operation } } }
      }
    }
  }
}`

// seedChain creates n tasks in a new project, each with two file impacts and a
// DEPENDS_ON link to the task before it, and returns the project's slug.
func seedChain(t testing.TB, s *testServer, slug string, n int) {
	t.Helper()
	projectID := s.createProject(t, s.AdminToken, slug)
	prev := ""
	for i := 0; i < n; i++ {
		id := s.createTask(t, s.AdminToken, projectID, fmt.Sprintf("task %d", i), map[string]any{
			"fileImpacts": []map[string]any{
				{"filePath": fmt.Sprintf("src/f%d.go", i), "operation": "UPDATE"},
				{"filePath": "go.mod", "operation": "READ"},
			},
		})
		if prev != "" {
			s.mustDo(t, s.AdminToken, `mutation($s: ID!, $t: ID!) { addTaskRelationship(input: {sourceTaskId: $s, targetTaskId: $t, type: DEPENDS_ON}) { relationship { id } } }`,
				map[string]any{"s": id, "t": prev}, nil)
		}
		prev = id
	}
}

// statementsFor runs the nested query on a project and returns the SQL statements
// it cost and the number of tasks it returned.
func statementsFor(t testing.TB, s *testServer, slug string) (int64, int) {
	t.Helper()
	var out struct {
		Project struct {
			Tasks struct {
				Nodes []struct {
					Relationships []struct {
						Target struct{ FileImpacts []struct{ FilePath string } }
					}
				}
			}
		}
	}
	before := s.DB.Statements()
	s.mustDo(t, s.AdminToken, nestedQuery, map[string]any{"slug": slug}, &out)
	return s.DB.Statements() - before, len(out.Project.Tasks.Nodes)
}

// TestNestedQueryStatements proves that SQL statements grow with the depth of a
// query, not with the rows it returns: 10 tasks and 100 tasks cost the same.
func TestNestedQueryStatements(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		seedChain(t, s, "small", 10)
		seedChain(t, s, "large", 100)
		statementsFor(t, s, "small") // warm the token's last-used mark
		small, nSmall := statementsFor(t, s, "small")
		large, nLarge := statementsFor(t, s, "large")
		require.Equal(t, 10, nSmall)
		require.Equal(t, 100, nLarge)
		require.Equal(t, small, large, "statements for 10 tasks vs 100 tasks")
		// token, project, tasks, relationships, targets, file impacts
		require.LessOrEqual(t, large, int64(6))
		// The levels below the tasks are read a level at a time
		// (graph/level_reads.go), without a batch: no resolver below the
		// tasks waits on one. Resolved object by object they waited 47 times
		// for 10 tasks and 497 for 100.
		waitsSmall, waitsLarge := waitsFor(t, s, "small"), waitsFor(t, s, "large")
		require.Equal(t, waitsSmall, waitsLarge, "waits on batches for 10 tasks vs 100 tasks")
		require.LessOrEqual(t, waitsLarge, 1.0, "at most the page of tasks waits")
		t.Logf("nested query: %d statements for 10 tasks, %d for 100; %.0f waits on a batch for 10, %.0f for 100", small, large, waitsSmall, waitsLarge)
		// Every batch closed when its level was in, none on the safety timer.
		require.Positive(t, s.counter(t, `taskgraph_loader_batches_total{closed="quiescent"}`))
		require.Zero(t, s.counter(t, `taskgraph_loader_batches_total{closed="timer"}`))
		require.Zero(t, s.counter(t, `taskgraph_loader_abandoned_total`))
	})
}

// waitsFor runs the nested query on a project and returns how many times a
// read waited on a batch.
func waitsFor(t testing.TB, s *testServer, slug string) float64 {
	t.Helper()
	before := s.counter(t, "taskgraph_loader_waits_total")
	statementsFor(t, s, slug)
	return s.counter(t, "taskgraph_loader_waits_total") - before
}

// edgesQuery is nestedQuery as Relay-style clients ask it: the tasks through
// their connection's edges.
const edgesQuery = `query($slug: String!) {
  project(slug: $slug) {
    tasks(first: 100) {
      edges {
        cursor
        node {
          id displayId
          relationships { type target { id displayId fileImpacts { filePath operation } } }
        }
      }
    }
  }
}`

// linkedQuery asks each task the tasks it waits on, those waiting on it and
// its subtasks, and theirs.
const linkedQuery = `query($slug: String!) {
  project(slug: $slug) {
    tasks(first: 100) {
      nodes {
        displayId
        dependencies { displayId dependents { displayId } }
        dependents { displayId subtasks { displayId } }
        subtasks { displayId }
      }
    }
  }
}`

// TestLevelReadStatements: through a connection's edges, and for the task
// lists made of a task's links, the levels below the tasks are read a level
// at a time too — the statements and the waits on a batch are the same for
// 10 tasks and 100.
func TestLevelReadStatements(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		seedChain(t, s, "levels-small", 10)
		seedChain(t, s, "levels-large", 100)
		for _, q := range []struct {
			name, query string
			maxStmts    int64
		}{
			// token, project, tasks, relationships, targets, file impacts
			{"edges", edgesQuery, 6},
			// token, project, tasks, then a level's links and linked
			// tasks, read once for the level's three fields (which share
			// the loaders); the level below asks the page's tasks again,
			// which are cached
			{"linked", linkedQuery, 6},
		} {
			read := func(slug string) (stmts int64, waits float64, tasks int) {
				var out struct {
					Project struct {
						Tasks struct {
							Nodes []struct {
								DisplayID    string
								Dependencies []struct{ Dependents []struct{ DisplayID string } }
							}
							Edges []struct {
								Cursor string
								Node   struct{ DisplayID string }
							}
						}
					}
				}
				before, waitsBefore := s.DB.Statements(), s.counter(t, "taskgraph_loader_waits_total")
				s.mustDo(t, s.AdminToken, q.query, map[string]any{"slug": slug}, &out)
				stmts, waits = s.DB.Statements()-before, s.counter(t, "taskgraph_loader_waits_total")-waitsBefore
				for _, e := range out.Project.Tasks.Edges {
					require.NotEmpty(t, e.Cursor)
					require.NotEmpty(t, e.Node.DisplayID)
				}
				for k, n := range out.Project.Tasks.Nodes {
					if k > 0 { // task k depends on task k-1, which task k waits on in turn
						require.Len(t, n.Dependencies, 1, q.name)
						require.Len(t, n.Dependencies[0].Dependents, 1, q.name)
					}
				}
				return stmts, waits, len(out.Project.Tasks.Edges) + len(out.Project.Tasks.Nodes)
			}
			read("levels-small") // warm the token's last-used mark
			small, waitsSmall, nSmall := read("levels-small")
			large, waitsLarge, nLarge := read("levels-large")
			require.Equal(t, 10, nSmall, q.name)
			require.Equal(t, 100, nLarge, q.name)
			require.Equal(t, small, large, "%s: statements for 10 tasks vs 100 tasks", q.name)
			require.LessOrEqual(t, large, q.maxStmts, q.name)
			require.Equal(t, waitsSmall, waitsLarge, "%s: waits on batches for 10 tasks vs 100 tasks", q.name)
			require.LessOrEqual(t, waitsLarge, 1.0, "%s: at most the page of tasks waits", q.name)
			t.Logf("%s query: %d statements for 10 tasks, %d for 100; %.0f waits on a batch for 10, %.0f for 100", q.name, small, large, waitsSmall, waitsLarge)
		}
	})
}

// eventsQuery pages the events of every project, with fields under the events.
const eventsQuery = `{
  projects(first: 10) {
    nodes {
      slug eventCursor
      events(first: 100) {
        totalCount
        nodes { cursor type task { displayId project { slug } } ... on TaskStatusChanged { from to } }
      }
    }
  }
}`

// TestEventsConnectionStatements: Project.events and the fields under its
// events cost statements per level of the query, not per event or project.
func TestEventsConnectionStatements(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		var projects []string
		for _, slug := range []string{"ev-one", "ev-two"} {
			projects = append(projects, s.createProject(t, s.AdminToken, slug))
		}
		grow := func(n int) {
			for _, p := range projects {
				for i := 0; i < n; i++ {
					id := s.createTask(t, s.AdminToken, p, fmt.Sprint(i), nil)
					s.transition(t, s.AdminToken, id, "PENDING")
				}
			}
		}
		measure := func() (int64, int) {
			var out struct {
				Projects struct {
					Nodes []struct {
						Events struct {
							Nodes []struct {
								Task struct{ Project struct{ Slug string } }
							}
						}
					}
				}
			}
			before := s.DB.Statements()
			s.mustDo(t, s.AdminToken, eventsQuery, nil, &out)
			n := 0
			for _, p := range out.Projects.Nodes {
				n += len(p.Events.Nodes)
			}
			return s.DB.Statements() - before, n
		}
		grow(2)
		measure() // warm the token's last-used mark
		small, nSmall := measure()
		grow(23)
		large, nLarge := measure()
		require.Equal(t, 8, nSmall)
		require.Equal(t, 100, nLarge)
		require.Equal(t, small, large, "statements for 8 events vs 100")
		// token, projects, event cursors, events, their totals, tasks, the
		// tasks' projects
		require.LessOrEqual(t, large, int64(7))
		t.Logf("events query: %d statements for %d events, %d for %d", small, nSmall, large, nLarge)
	})
}
