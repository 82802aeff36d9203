package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// gqlClient speaks GraphQL to Taskgraph with a bearer token.
type gqlClient struct {
	url, token string
	http       *http.Client
}

// do runs one operation and decodes its data into into; any GraphQL error
// fails it.
func (c *gqlClient) do(ctx context.Context, query string, vars map[string]any, into any) error {
	body, err := json.Marshal(graphQLRequest{Query: query, Variables: vars})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.500s", resp.StatusCode, out)
	}
	return decodeData(out, into)
}

// seedSize is the data set: tasks in one list, relationships among them,
// file impacts per task.
type seedSize struct {
	tasks, relationships, impactsPerTask int
}

// seeded is what the fill made, as Taskgraph's global ids.
type seeded struct {
	projectID, listID string
	taskIDs           []string
}

// seedBatch is how many mutations go in one request (aliases): the fill
// goes through the API, one mutation per row as a client would, but not one
// round trip per row.
const seedBatch = 50

// categories cycle through the tasks, so that display ids have several
// prefixes as in real projects.
var categories = []string{"FEATURE", "BUG", "TASK", "REFACTOR", "TEST", "DOCS", "INFRA"}

// seed fills Taskgraph through its GraphQL API: a project, a task list,
// the tasks in the list with their file impacts (createTask), then the
// relationships (addTaskRelationship).
func seed(ctx context.Context, c *gqlClient, size seedSize, logf func(string, ...any)) (*seeded, error) {
	var s seeded
	var p struct {
		CreateProject struct{ Project struct{ ID string } }
	}
	if err := c.do(ctx, `mutation($in: CreateProjectInput!) { createProject(input: $in) { project { id } } }`,
		map[string]any{"in": map[string]any{"name": "Peer bench", "slug": "peer",
			"description": "made by make bench-peer"}}, &p); err != nil {
		return nil, fmt.Errorf("createProject: %w", err)
	}
	s.projectID = p.CreateProject.Project.ID
	var l struct {
		CreateTaskList struct{ TaskList struct{ ID string } }
	}
	if err := c.do(ctx, `mutation($in: CreateTaskListInput!) { createTaskList(input: $in) { taskList { id } } }`,
		map[string]any{"in": map[string]any{"projectId": s.projectID, "name": "Peer bench list",
			"description": "the nested read's list"}}, &l); err != nil {
		return nil, fmt.Errorf("createTaskList: %w", err)
	}
	s.listID = l.CreateTaskList.TaskList.ID

	start := time.Now()
	inputs := make([]map[string]any, size.tasks)
	for i := range inputs {
		impacts := make([]map[string]any, size.impactsPerTask)
		for k := range impacts {
			impacts[k] = impactInput(i, k)
		}
		inputs[i] = map[string]any{
			"projectId":          s.projectID,
			"taskListId":         s.listID,
			"title":              fmt.Sprintf("Task %d of the peer bench", i),
			"description":        fmt.Sprintf("Task %d: one of %d tasks filled through the API.", i, size.tasks),
			"category":           categories[i%len(categories)],
			"priority":           []string{"P1", "P2", "P3", "P4"}[i%4],
			"acceptanceCriteria": []string{"it works", "it is tested"},
			"fileImpacts":        impacts,
		}
		wideInput(inputs[i], i)
	}
	ids, err := batch(ctx, c, "createTask", "CreateTaskInput!", "task { id }", inputs, func(out json.RawMessage) (string, error) {
		var r struct{ Task struct{ ID string } }
		err := json.Unmarshal(out, &r)
		return r.Task.ID, err
	})
	if err != nil {
		return nil, err
	}
	s.taskIDs = ids
	logf("created %d tasks with %d file impacts each through createTask in %s", len(ids), size.impactsPerTask, time.Since(start).Round(time.Millisecond))

	// The columns createTask does not fill: the actual effort (updateTask)
	// and the start and completion times (transitionTask), on some tasks,
	// before the relationships so that no dependency holds them back.
	start = time.Now()
	var updates, moves []map[string]any
	for i, id := range ids {
		if i%4 == 1 {
			updates = append(updates, map[string]any{"id": id, "actualEffortMinutes": 15 + i%240})
		}
		if i%5 == 2 {
			moves = append(moves, map[string]any{"id": id, "to": "IN_PROGRESS", "reason": "peer bench"})
		}
	}
	if _, err := batch(ctx, c, "updateTask", "UpdateTaskInput!", "task { id }", updates, ignore); err != nil {
		return nil, err
	}
	if _, err := batch(ctx, c, "transitionTask", "TransitionTaskInput!", "task { id }", moves, ignore); err != nil {
		return nil, err
	}
	var done []map[string]any
	for k, m := range moves {
		if k%2 == 0 {
			done = append(done, map[string]any{"id": m["id"], "to": "VALIDATING"})
		}
	}
	if _, err := batch(ctx, c, "transitionTask", "TransitionTaskInput!", "task { id }", done, ignore); err != nil {
		return nil, err
	}
	for _, d := range done {
		d["to"] = "COMPLETED"
	}
	if _, err := batch(ctx, c, "transitionTask", "TransitionTaskInput!", "task { id }", done, ignore); err != nil {
		return nil, err
	}
	logf("set the actual effort of %d tasks, started %d and completed %d of those in %s", len(updates), len(moves), len(done), time.Since(start).Round(time.Millisecond))

	start = time.Now()
	plan, err := planRelationships(size.tasks, size.relationships)
	if err != nil {
		return nil, err
	}
	rels := make([]map[string]any, len(plan))
	for i, r := range plan {
		rels[i] = map[string]any{"sourceTaskId": ids[r.source], "targetTaskId": ids[r.target], "type": r.typ}
	}
	if _, err := batch(ctx, c, "addTaskRelationship", "AddTaskRelationshipInput!", "relationship { id }", rels, ignore); err != nil {
		return nil, err
	}
	logf("added %d relationships through addTaskRelationship in %s", len(rels), time.Since(start).Round(time.Millisecond))
	return &s, nil
}

// ignore is batch's pick for answers that hold nothing needed.
func ignore(json.RawMessage) (string, error) { return "", nil }

// wideInput fills the columns of task i's createTask that the wide read
// shows, so that it reads values rather than nulls: effort, owner, phase
// and deadline on most tasks (each left null on some), a risk level, and an
// embedding's model on every third task.
func wideInput(in map[string]any, i int) {
	in["riskLevel"] = []string{"LOW", "MEDIUM", "HIGH"}[i%3]
	if e := []string{"TRIVIAL", "SMALL", "MEDIUM", "LARGE", "EPIC", ""}[i%6]; e != "" {
		in["effort"] = e
	}
	if o := []string{"BUILD_AGENT", "HUMAN", "TASK_AGENT", ""}[i%4]; o != "" {
		in["owner"] = o
	}
	if p := []string{"DATABASE", "TYPES", "API", "UI", "TESTS", ""}[(i/2)%6]; p != "" {
		in["phase"] = p
	}
	if i%7 != 0 {
		in["deadline"] = seedEpoch.Add(time.Duration(i) * 90 * time.Minute).Format(time.RFC3339)
	}
	if i%3 == 0 {
		in["embeddingModel"] = "peer-bench-4"
		in["embedding"] = []float64{float64(i%10) / 10, 0.5, -0.25, 1}
	}
}

// seedEpoch is the first deadline: fixed, so every run has the same data.
var seedEpoch = time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC)

// impactInput is file impact k of task i: a file of its own, a file its
// package shares, then more files of its own.
func impactInput(i, k int) map[string]any {
	switch k {
	case 0:
		return map[string]any{"filePath": fmt.Sprintf("internal/pkg%02d/task%04d.go", i%40, i), "operation": "UPDATE"}
	case 1:
		return map[string]any{"filePath": fmt.Sprintf("internal/pkg%02d/shared.go", i%40), "operation": "READ", "confidence": 0.8}
	default:
		return map[string]any{"filePath": fmt.Sprintf("docs/task%04d-%d.md", i, k), "operation": "CREATE", "source": "AI_ESTIMATE", "confidence": 0.6}
	}
}

// batch runs mutation once per input, seedBatch aliased mutations per
// request, and returns what pick takes from each answer, in input order.
func batch(ctx context.Context, c *gqlClient, mutation, inputType, selection string, inputs []map[string]any, pick func(json.RawMessage) (string, error)) ([]string, error) {
	out := make([]string, 0, len(inputs))
	for lo := 0; lo < len(inputs); lo += seedBatch {
		hi := min(lo+seedBatch, len(inputs))
		var q, params strings.Builder
		vars := map[string]any{}
		for i := lo; i < hi; i++ {
			fmt.Fprintf(&params, "$i%d: %s ", i-lo, inputType)
			fmt.Fprintf(&q, "m%d: %s(input: $i%d) { %s }\n", i-lo, mutation, i-lo, selection)
			vars[fmt.Sprintf("i%d", i-lo)] = inputs[i]
		}
		var data map[string]json.RawMessage
		if err := c.do(ctx, fmt.Sprintf("mutation Seed(%s) {\n%s}", params.String(), q.String()), vars, &data); err != nil {
			return nil, fmt.Errorf("%s, rows %d to %d: %w", mutation, lo, hi-1, err)
		}
		for i := lo; i < hi; i++ {
			v, err := pick(data[fmt.Sprintf("m%d", i-lo)])
			if err != nil {
				return nil, fmt.Errorf("%s, row %d: %w", mutation, i, err)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// plannedRel is one relationship to add, by task index.
type plannedRel struct {
	source, target int
	typ            string
}

// relWindow is how far apart (in list order) a relationship's tasks are.
const relWindow = 50

// planRelationships spreads r relationships evenly over n tasks as their
// sources (r/n each, the first r mod n one more) and keeps the graph
// acyclic: a DEPENDS_ON link points to an earlier task, a BLOCKS link to a
// later one, so that every task waits only on earlier ones; RELATED_TO
// links point to later tasks. Targets are drawn with a fixed seed, so the
// data is the same on every run; no (source, target, type) repeats.
func planRelationships(n, r int) ([]plannedRel, error) {
	if n < 2 || r > n*relWindow {
		return nil, fmt.Errorf("cannot place %d relationships among %d tasks", r, n)
	}
	rng := rand.New(rand.NewPCG(16, 2026))
	seen := map[plannedRel]bool{}
	out := make([]plannedRel, 0, r)
	for k := range r {
		i, slot := k%n, k/n
		for range 1000 {
			var rel plannedRel
			backward := (slot%2 == 0 && i > 0) || i == n-1
			if backward {
				lo := max(0, i-relWindow)
				rel = plannedRel{source: i, target: lo + rng.IntN(i-lo), typ: "DEPENDS_ON"}
			} else {
				hi := min(n-1, i+relWindow)
				typ := "BLOCKS"
				if rng.IntN(2) == 0 {
					typ = "RELATED_TO"
				}
				rel = plannedRel{source: i, target: i + 1 + rng.IntN(hi-i), typ: typ}
			}
			if !seen[rel] {
				seen[rel] = true
				out = append(out, rel)
				break
			}
		}
		if len(out) != k+1 {
			return nil, fmt.Errorf("no free target for relationship %d of task %d", slot, i)
		}
	}
	return out, nil
}
