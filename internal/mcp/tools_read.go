package mcp

import (
	"context"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskSummary is what lists show of a task.
const taskSummary = `id displayId title status category priority priorityScore`

// TaskDetail is what get_task and claim_task select of a task: enough to
// work on it without another call. (Exported for the benchmark that sends the
// same operation through GraphQL.)
const TaskDetail = `id displayId title description status category priority priorityScore riskLevel effort version
  acceptanceCriteria codebaseTests apiTests uiTests affectedFiles
  project { id slug name } taskList { id name }
  fileImpacts { filePath operation confidence }
  dependencies { id displayId title status }
  dependents { id displayId title status }
  relevantLessons(first: 5) { id lesson context whatWorked whatFailed toolName confidence }`

type listProjectsIn struct {
	Query string `json:"query,omitempty" jsonschema:"Text to match in a project's name, slug or description; empty lists every project you can see."`
	First int    `json:"first,omitempty" jsonschema:"How many projects to return (1-100, default 20)."`
}

type listTasksIn struct {
	Project  string   `json:"project,omitempty" jsonschema:"The project's slug or id; empty: every project you can see."`
	Status   []string `json:"status,omitempty" jsonschema:"Only tasks in these statuses."`
	TaskList string   `json:"taskList,omitempty" jsonschema:"Only the tasks of this task list (its id)."`
	Query    string   `json:"query,omitempty" jsonschema:"Text to match in titles and descriptions."`
	First    int      `json:"first,omitempty" jsonschema:"How many tasks to return (1-100, default 20), highest priority first."`
	After    string   `json:"after,omitempty" jsonschema:"The endCursor of the previous page, to read the next one."`
}

type getTaskIn struct {
	ID        string `json:"id,omitempty" jsonschema:"The task's id (a display id such as TU-WEB-FEA-001 works too)."`
	DisplayID string `json:"displayId,omitempty" jsonschema:"The task's display id, e.g. TU-WEB-FEA-001."`
}

func first(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

func (t *tools) addReadTools(s *sdk.Server) {
	add(s, t, &sdk.Tool{Name: "list_projects", Title: "List projects", Annotations: readOnly(),
		Description: `Lists the Taskgraph projects your token can see: id, slug, name, status and how many questions to people are pending.
Call it first to find the project to work in; other tools take the project's slug or id.
Returns {projects: [...], totalCount}.`},
		func(ctx context.Context, c *call, in listProjectsIn) (any, error) {
			var out map[string]any
			err := c.do(ctx, `query($first: Int, $q: String) {
  projects(first: $first, filter: {search: $q}) { totalCount nodes { id slug name description status pendingQuestionCount } }
}`, vars{"first": first(in.First, 20)}.str("q", in.Query), &out)
			if err != nil {
				return nil, err
			}
			p, _ := out["projects"].(map[string]any)
			return map[string]any{"projects": p["nodes"], "totalCount": p["totalCount"]}, nil
		},
		maxLen(maxQuery, "query"), between("first", 0, maxPage))

	add(s, t, &sdk.Tool{Name: "list_tasks", Title: "List tasks", Annotations: readOnly(),
		Description: `Lists tasks, highest priority first, filtered by project, status, task list and text.
Use it to survey work or to find a task's id; call get_task for one task's full detail.
Returns {tasks: [{id, displayId, title, status, category, priority, priorityScore}], totalCount, hasNextPage, endCursor}; pass endCursor as after for the next page.`},
		func(ctx context.Context, c *call, in listTasksIn) (any, error) {
			project, err := c.projectID(ctx, "project", in.Project)
			if err != nil {
				return nil, err
			}
			filter := map[string]any{}
			if len(in.Status) > 0 {
				filter["status"] = in.Status
			}
			if in.TaskList != "" {
				filter["taskListId"] = in.TaskList
			}
			if in.Query != "" {
				filter["search"] = in.Query
			}
			var out struct {
				Tasks struct {
					TotalCount int              `json:"totalCount"`
					Nodes      []map[string]any `json:"nodes"`
					PageInfo   struct {
						HasNextPage bool    `json:"hasNextPage"`
						EndCursor   *string `json:"endCursor"`
					} `json:"pageInfo"`
				}
			}
			err = c.do(ctx, `query($p: ID, $f: TaskFilter, $first: Int, $after: String) {
  tasks(projectId: $p, filter: $f, first: $first, after: $after, orderBy: {field: PRIORITY_SCORE, direction: DESC}) {
    totalCount pageInfo { hasNextPage endCursor } nodes { `+taskSummary+` }
  }
}`, vars{"f": filter, "first": first(in.First, 20)}.str("p", project).str("after", in.After), &out)
			if err != nil {
				return nil, err
			}
			if out.Tasks.Nodes == nil {
				out.Tasks.Nodes = []map[string]any{}
			}
			return map[string]any{"tasks": out.Tasks.Nodes, "totalCount": out.Tasks.TotalCount,
				"hasNextPage": out.Tasks.PageInfo.HasNextPage, "endCursor": out.Tasks.PageInfo.EndCursor}, nil
		},
		enum("status", taskStatuses...), maxItems(len(taskStatuses), "status"),
		maxLen(maxID, "project", "taskList", "after"), maxLen(maxQuery, "query"), between("first", 0, maxPage))

	add(s, t, &sdk.Tool{Name: "get_task", Title: "Get a task", Annotations: readOnly(),
		Description: `Reads one task in full, by id or display id: description, acceptance criteria, declared tests (codebaseTests, apiTests, uiTests — record_test_result's testIndex indexes these), file impacts, dependencies and dependents with their status, and up to 5 lessons relevant to it.
Read the lessons before you start: they are what earlier agents learned. Returns {task}; NOT_FOUND when it does not exist or is not visible to you.`},
		func(ctx context.Context, c *call, in getTaskIn) (any, error) {
			v := vars{}
			switch {
			case in.DisplayID != "":
				v["d"] = strings.ToUpper(strings.TrimSpace(in.DisplayID))
			case isDisplayID(in.ID):
				v["d"] = strings.ToUpper(strings.TrimSpace(in.ID))
			case in.ID != "":
				v["id"] = in.ID
			default:
				return nil, badInput("id", "give id or displayId")
			}
			var out struct{ Task map[string]any }
			if err := c.do(ctx, `query($id: ID, $d: String) { task(id: $id, displayId: $d) { `+TaskDetail+` } }`, v, &out); err != nil {
				return nil, err
			}
			if out.Task == nil {
				return nil, notFound("id", "task")
			}
			return map[string]any{"task": out.Task}, nil
		},
		maxLen(maxID, "id", "displayId"))
}
