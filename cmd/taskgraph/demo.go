package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/client"
)

// demoTask is one task of the demo plan: a login feature built in layers,
// where two API tasks update the same router file (so they cannot share a
// wave) and declared tests gate completion.
type demoTask struct {
	title, category, effort, phase string
	creates, updates               []string
	dependsOn                      []int // indexes into demoTasks
	codebaseTests, apiTests        []string
}

var demoTasks = []demoTask{
	{title: "Create users table", category: "FEATURE", effort: "SMALL", phase: "DATABASE", creates: []string{"db/migrations/001_users.sql"}},
	{title: "Create sessions table", category: "FEATURE", effort: "SMALL", phase: "DATABASE", creates: []string{"db/migrations/002_sessions.sql"}},
	{title: "User type", category: "FEATURE", effort: "TRIVIAL", phase: "TYPES", creates: []string{"types/user.go"}, dependsOn: []int{0}},
	{title: "Session type", category: "FEATURE", effort: "TRIVIAL", phase: "TYPES", creates: []string{"types/session.go"}, dependsOn: []int{1}},
	{title: "Login API", category: "FEATURE", effort: "MEDIUM", phase: "API", creates: []string{"api/auth.go"},
		updates: []string{"api/router.go"}, dependsOn: []int{2, 3}, apiTests: []string{"POST /login answers a session"}},
	{title: "Profile API", category: "FEATURE", effort: "SMALL", phase: "API", creates: []string{"api/profile.go"},
		updates: []string{"api/router.go"}, dependsOn: []int{2}},
	{title: "Login page", category: "FEATURE", effort: "MEDIUM", phase: "UI", creates: []string{"ui/login.tsx"},
		dependsOn: []int{4}, codebaseTests: []string{"npm test -- login"}},
	{title: "Profile page", category: "FEATURE", effort: "SMALL", phase: "UI", creates: []string{"ui/profile.tsx"}, dependsOn: []int{5}},
	{title: "End-to-end login tests", category: "TEST", effort: "SMALL", phase: "TESTS", creates: []string{"tests/login.spec.ts"},
		dependsOn: []int{6, 7}, codebaseTests: []string{"npx playwright test login"}},
}

// runDemo creates a demo task list in a project (created if missing),
// starts a run of it and prints how to watch it and work it.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	slug := fs.String("project", "login", "slug of the project to put the demo list in (created if missing)")
	agents := fs.Int("agents", 3, "the list's maxParallelAgents")
	url := fs.String("url", envOr("TASKGRAPH_URL", "http://127.0.0.1:8080"), "server URL (env TASKGRAPH_URL)")
	token := new(string)
	secretFlag(fs, token, "token", "TASKGRAPH_TOKEN", "ADMIN or MEMBER API token")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 || *agents < 1 {
		fmt.Fprintln(stderr, "Usage: taskgraph demo [--project SLUG] [--agents N] [--url URL] [--token TOKEN]")
		fs.PrintDefaults()
		return errUsage
	}
	c := client.New(*url, *token)
	var p struct{ Project *struct{ ID string } }
	if err := c.Do(ctx, `query($slug: String!) { project(slug: $slug) { id } }`, map[string]any{"slug": *slug}, &p); err != nil {
		return err
	}
	if p.Project == nil {
		var r struct {
			CreateProject struct{ Project struct{ ID string } }
		}
		if err := c.Do(ctx, `mutation($in: CreateProjectInput!) { createProject(input: $in) { project { id } } }`,
			map[string]any{"in": map[string]any{"name": "Demo", "slug": *slug,
				"description": "Created by taskgraph demo"}}, &r); err != nil {
			return err
		}
		p.Project = &struct{ ID string }{r.CreateProject.Project.ID}
	}
	var l struct {
		CreateTaskList struct{ TaskList struct{ ID string } }
	}
	if err := c.Do(ctx, `mutation($in: CreateTaskListInput!) { createTaskList(input: $in) { taskList { id } } }`,
		map[string]any{"in": map[string]any{"projectId": p.Project.ID, "maxParallelAgents": *agents,
			"name": "Login feature " + time.Now().UTC().Format("2006-01-02 15:04:05")}}, &l); err != nil {
		return err
	}
	ids := make([]string, len(demoTasks))
	for i, d := range demoTasks {
		var impacts []map[string]any
		for _, f := range d.creates {
			impacts = append(impacts, map[string]any{"filePath": f, "operation": "CREATE"})
		}
		for _, f := range d.updates {
			impacts = append(impacts, map[string]any{"filePath": f, "operation": "UPDATE"})
		}
		var t struct {
			CreateTask struct{ Task struct{ ID string } }
		}
		if err := c.Do(ctx, `mutation($in: CreateTaskInput!) { createTask(input: $in) { task { id } } }`,
			map[string]any{"in": map[string]any{"projectId": p.Project.ID, "taskListId": l.CreateTaskList.TaskList.ID,
				"title": d.title, "category": d.category, "effort": d.effort, "phase": d.phase, "fileImpacts": impacts,
				"codebaseTests": d.codebaseTests, "apiTests": d.apiTests}}, &t); err != nil {
			return err
		}
		ids[i] = t.CreateTask.Task.ID
		for _, dep := range d.dependsOn {
			if err := c.Do(ctx, `mutation($in: AddTaskRelationshipInput!) { addTaskRelationship(input: $in) { relationship { id } } }`,
				map[string]any{"in": map[string]any{"sourceTaskId": ids[i], "targetTaskId": ids[dep], "type": "DEPENDS_ON"}}, nil); err != nil {
				return err
			}
		}
	}
	var cur struct{ Project struct{ EventCursor string } }
	if err := c.Do(ctx, `query($slug: String!) { project(slug: $slug) { eventCursor } }`, map[string]any{"slug": *slug}, &cur); err != nil {
		return err
	}
	var r struct {
		StartExecutionRun struct {
			Run struct {
				ID    string
				Waves []struct {
					WaveNumber  int
					Assignments []struct {
						Task struct{ DisplayID, Title string }
					}
				}
			}
		}
	}
	if err := c.Do(ctx, `mutation($in: StartExecutionRunInput!) { startExecutionRun(input: $in) { run { id
		waves { waveNumber assignments { task { displayId title } } } } } }`,
		map[string]any{"in": map[string]any{"taskListId": l.CreateTaskList.TaskList.ID, "reason": "taskgraph demo"}}, &r); err != nil {
		return err
	}
	run := r.StartExecutionRun.Run
	fmt.Fprintf(stdout, "Started run %s of %d tasks in project %q:\n", run.ID, len(demoTasks), *slug)
	for _, w := range run.Waves {
		var names []string
		for _, a := range w.Assignments {
			names = append(names, a.Task.DisplayID+" "+a.Task.Title)
		}
		fmt.Fprintf(stdout, "  wave %d: %s\n", w.WaveNumber, strings.Join(names, ", "))
	}
	self := selfCommand()
	fmt.Fprintf(stdout, "\nWatch it:  %s watch --project %s --after %s\nWork it:   %s agent --run %s --simulate --work 2s --parallel %d\n",
		self, *slug, cur.Project.EventCursor, self, run.ID, *agents)
	return nil
}
