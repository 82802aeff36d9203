package main

import (
	"fmt"
	"testing"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// createTaskMutation is the side-by-side write (bench/peer sends the same):
// a task with a title, a description and a priority, in a project, outside
// any list.
const createTaskMutation = `mutation($input: CreateTaskInput!) { createTask(input: $input) { task { id displayId } } }`

// BenchmarkCreateTask creates tasks from TASKGRAPH_BENCH_CLIENTS clients
// (default 4) in one project, each client's next create sent when its last
// one answered.
func BenchmarkCreateTask(b *testing.B) {
	clients := envIntOr("TASKGRAPH_BENCH_CLIENTS", 4)
	for _, c := range testdb.Cases(b) {
		b.Run(c.Name, func(b *testing.B) {
			s := startServer(b, c.URL(b))
			project := s.createProject(b, s.AdminToken, fmt.Sprintf("bw%04d", planSlugs.Add(1)))
			hc := fastClient(clients)
			create := func(_ int, n int64) error {
				return s.call(hc, s.AdminToken, createTaskMutation, M{"input": M{"projectId": project,
					"title": fmt.Sprintf("bench create %d", n), "description": "created by BenchmarkCreateTask", "priority": "P3"}}, nil)
			}
			stmts := statementsOf(b, s, func() {
				if err := create(0, 0); err != nil {
					b.Fatal(err)
				}
			})
			stopProfile := profileCPU(b)
			cpu0 := processCPU(b)
			elapsed, lat := closedLoop(b, clients, create)
			stopProfile()
			reportRequests(b, elapsed, lat, cpu0, stmts)
		})
	}
}
