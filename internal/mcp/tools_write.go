package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/taskgraph/taskgraph/internal/domain"
)

type fileImpactIn struct {
	FilePath  string `json:"filePath" jsonschema:"A path relative to the repository root."`
	Operation string `json:"operation" jsonschema:"What the task does to the file."`
}

// taskFields are the fields create_task and update_task share.
type taskFields struct {
	Description        string         `json:"description,omitempty" jsonschema:"What to do and why, in Markdown."`
	Category           string         `json:"category,omitempty" jsonschema:"Default TASK."`
	Priority           string         `json:"priority,omitempty" jsonschema:"P1 (most urgent) to P4; default P3."`
	Effort             string         `json:"effort,omitempty" jsonschema:"How big the task is."`
	RiskLevel          string         `json:"riskLevel,omitempty" jsonschema:"Default MEDIUM."`
	AcceptanceCriteria []string       `json:"acceptanceCriteria,omitempty" jsonschema:"What must be true when the task is done."`
	CodebaseTests      []string       `json:"codebaseTests,omitempty" jsonschema:"Unit tests that must pass (record_test_result level CODEBASE, by index)."`
	APITests           []string       `json:"apiTests,omitempty" jsonschema:"API tests that must pass (level API, by index)."`
	UITests            []string       `json:"uiTests,omitempty" jsonschema:"UI tests that must pass (level UI, by index)."`
	FileImpacts        []fileImpactIn `json:"fileImpacts,omitempty" jsonschema:"The files the task will touch: tasks that touch the same file in conflicting ways never run in parallel. update_task replaces them all."`
	TaskList           string         `json:"taskList,omitempty" jsonschema:"Put the task in this task list (its id); it becomes PENDING there, ready for runs."`
	ParentTask         string         `json:"parentTask,omitempty" jsonschema:"The parent task's id or display id."`
}

type createTaskIn struct {
	Project string `json:"project" jsonschema:"The project's slug or id."`
	Title   string `json:"title" jsonschema:"A short imperative title."`
	taskFields
}

type updateTaskIn struct {
	ID              string `json:"id,omitempty" jsonschema:"The task's id or display id."`
	DisplayID       string `json:"displayId,omitempty" jsonschema:"The task's display id (instead of id)."`
	ExpectedVersion *int   `json:"expectedVersion,omitempty" jsonschema:"The version you read (get_task's version): the update applies only if nobody changed the task since; VERSION_CONFLICT otherwise."`
	Title           string `json:"title,omitempty" jsonschema:"A new title."`
	taskFields
}

type linkTasksIn struct {
	Source string `json:"source" jsonschema:"The source task's id or display id."`
	Target string `json:"target" jsonschema:"The target task's id or display id."`
	Type   string `json:"type" jsonschema:"DEPENDS_ON: source waits for target. BLOCKS: target waits for source. CONFLICTS_WITH: never run both at once. The others are informative."`
	Notes  string `json:"notes,omitempty" jsonschema:"Why they are linked."`
}

// input fills a createTaskInput or updateTaskInput with the fields given.
func (f taskFields) input(ctx context.Context, c *call, in map[string]any) error {
	vars(in).str("description", f.Description).str("category", f.Category).str("priority", f.Priority).
		str("effort", f.Effort).str("riskLevel", f.RiskLevel).str("taskListId", f.TaskList).
		list("acceptanceCriteria", f.AcceptanceCriteria).list("codebaseTests", f.CodebaseTests).
		list("apiTests", f.APITests).list("uiTests", f.UITests)
	if f.FileImpacts != nil {
		impacts := make([]map[string]any, len(f.FileImpacts))
		for i, fi := range f.FileImpacts {
			impacts[i] = map[string]any{"filePath": fi.FilePath, "operation": fi.Operation}
		}
		in["fileImpacts"] = impacts
	}
	if f.ParentTask != "" {
		id, err := c.taskID(ctx, "parentTask", f.ParentTask)
		if err != nil {
			return err
		}
		in["parentTaskId"] = id
	}
	return nil
}

// taskFieldShapes bound and enumerate taskFields.
func taskFieldShapes() []shaper {
	return []shaper{
		enum("category", taskCategories...), enum("priority", priorities...), enum("effort", efforts...), enum("riskLevel", riskLevels...),
		maxLen(domain.MaxDescription, "description"),
		maxItems(domain.MaxListItems, "acceptanceCriteria", "codebaseTests", "apiTests", "uiTests", "fileImpacts"),
		maxLen(domain.MaxListEntry, "acceptanceCriteria", "codebaseTests", "apiTests", "uiTests"),
		nested("fileImpacts", enum("operation", fileOperations...), maxLen(domain.MaxPathLength, "filePath")),
		maxLen(maxID, "taskList", "parentTask"),
	}
}

func (t *tools) addWriteTools(s *sdk.Server) {
	add(s, t, &sdk.Tool{Name: "create_task", Title: "Create a task", Annotations: writes(false),
		Description: `Creates a task in a project (DRAFT, or PENDING when taskList is given). Needs an ADMIN or MEMBER token: an AGENT token gets FORBIDDEN.
Declare its fileImpacts so that the planner keeps conflicting tasks apart, and its tests so that completion is checked.
Returns {task: {id, displayId, title, status, version}}. Link dependencies afterwards with link_tasks.`},
		func(ctx context.Context, c *call, in createTaskIn) (any, error) {
			project, err := c.projectID(ctx, "project", in.Project)
			if err != nil {
				return nil, err
			}
			input := map[string]any{"projectId": project, "title": in.Title}
			if err := in.input(ctx, c, input); err != nil {
				return nil, err
			}
			var out struct{ CreateTask struct{ Task map[string]any } }
			if err := c.do(ctx, `mutation($in: CreateTaskInput!) { createTask(input: $in) { task { id displayId title status version taskList { id name } } } }`,
				vars{"in": input}, &out); err != nil {
				return nil, err
			}
			return map[string]any{"task": out.CreateTask.Task}, nil
		},
		append(taskFieldShapes(), maxLen(maxID, "project"), maxLen(domain.MaxTitle, "title"))...)

	add(s, t, &sdk.Tool{Name: "update_task", Title: "Update a task", Annotations: writes(true),
		Description: `Changes the fields given of a task (by id or display id); fields left out keep their value. Needs an ADMIN or MEMBER token.
Pass expectedVersion (the version get_task returned) to avoid overwriting someone else's change: VERSION_CONFLICT means read the task again and retry.
Returns {task: {id, displayId, title, status, version}}.`},
		func(ctx context.Context, c *call, in updateTaskIn) (any, error) {
			ref := in.ID
			if in.DisplayID != "" {
				ref = in.DisplayID
			}
			id, err := c.taskID(ctx, "id", ref)
			if err != nil {
				return nil, err
			}
			input := map[string]any{"id": id}
			vars(input).opt("expectedVersion", in.ExpectedVersion).str("title", in.Title)
			if err := in.input(ctx, c, input); err != nil {
				return nil, err
			}
			var out struct{ UpdateTask struct{ Task map[string]any } }
			if err := c.do(ctx, `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { task { id displayId title status version taskList { id name } } } }`,
				vars{"in": input}, &out); err != nil {
				return nil, err
			}
			return map[string]any{"task": out.UpdateTask.Task}, nil
		},
		append(taskFieldShapes(), maxLen(maxID, "id", "displayId"), maxLen(domain.MaxTitle, "title"), between("expectedVersion", 0, 1<<31-1))...)

	add(s, t, &sdk.Tool{Name: "link_tasks", Title: "Link two tasks", Annotations: writes(false),
		Description: `Links two tasks (ids or display ids). DEPENDS_ON makes source wait until target is COMPLETED; the planner puts them in successive waves. Needs an ADMIN or MEMBER token.
Returns {relationship: {id, type, source, target}}; CONFLICT when the link exists or would close a cycle.`},
		func(ctx context.Context, c *call, in linkTasksIn) (any, error) {
			source, err := c.taskID(ctx, "source", in.Source)
			if err != nil {
				return nil, err
			}
			target, err := c.taskID(ctx, "target", in.Target)
			if err != nil {
				return nil, err
			}
			input := vars{"sourceTaskId": source, "targetTaskId": target, "type": in.Type}.str("notes", in.Notes)
			var out struct {
				AddTaskRelationship struct{ Relationship map[string]any }
			}
			if err := c.do(ctx, `mutation($in: AddTaskRelationshipInput!) { addTaskRelationship(input: $in) { relationship {
  id type source { id displayId title status } target { id displayId title status } } } }`, vars{"in": map[string]any(input)}, &out); err != nil {
				return nil, err
			}
			return map[string]any{"relationship": out.AddTaskRelationship.Relationship}, nil
		},
		enum("type", relationships...), maxLen(maxID, "source", "target"), maxLen(domain.MaxListEntry, "notes"))
}
