package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The nested read asks every server for the same rows: the first page of a
// task list's tasks in list order; per task its id, display id, title,
// status, its outgoing relationships (id, type, target) and its file impacts
// (id, path, operation); per target the same task fields and its file
// impacts.

// taskgraphRead is Taskgraph's nested read.
const taskgraphRead = `query NestedRead($id: ID!, $first: Int!) {
  taskList(id: $id) {
    tasks(first: $first) {
      nodes {
        id displayId title status
        relationships(direction: OUTGOING) {
          id type
          target { id displayId title status fileImpacts { id filePath operation } }
        }
        fileImpacts { id filePath operation }
      }
    }
  }
}`

// postgraphileRead is the same read on PostGraphile's schema of Taskgraph's
// tables: the list's items ordered by position, each item's task, and the
// relations PostGraphile derives from the foreign keys. Aliases give the
// answer Taskgraph's field names. ROW_ID and LIST_BY_ID differ between
// PostGraphile 4 (the id column is id) and 5 (rowId; id is the node id).
const postgraphileRead = `query NestedRead($id: UUID!, $first: Int!) {
  taskList: LIST_BY_ID {
    tasks: taskListItemsByTaskListId(first: $first, orderBy: POSITION_ASC) {
      nodes {
        task: taskByTaskId {
          ROW_ID displayId title status
          relationships: taskRelationshipsBySourceTaskId {
            nodes {
              ROW_ID type: relationshipType
              target: taskByTargetTaskId {
                ROW_ID displayId title status
                fileImpacts: taskFileImpactsByTaskId { nodes { ROW_ID filePath operation } }
              }
            }
          }
          fileImpacts: taskFileImpactsByTaskId { nodes { ROW_ID filePath operation } }
        }
      }
    }
  }
}`

var (
	pg4Read = strings.NewReplacer("LIST_BY_ID", "taskListById(id: $id)", "ROW_ID", "id").Replace(postgraphileRead)
	pg5Read = strings.NewReplacer("LIST_BY_ID", "taskListByRowId(rowId: $id)", "ROW_ID", "id: rowId").Replace(postgraphileRead)
)

// taskgraphCreate is Taskgraph's createTask, with all its rules, history
// and events.
const taskgraphCreate = `mutation CreateTask($input: CreateTaskInput!) {
  createTask(input: $input) { task { id displayId } }
}`

// pg4Create and pg5Create are PostGraphile's generated insert on the tasks
// table: one row, the columns without defaults given by the client.
const (
	pg4Create = `mutation CreateTask($task: TaskInput!) {
  createTask(input: {task: $task}) { task { id displayId } }
}`
	pg5Create = `mutation CreateTask($task: TaskInput!) {
  createTask(input: {task: $task}) { task { id: rowId displayId } }
}`
)

// graphQLRequest is the body of a GraphQL POST.
type graphQLRequest struct {
	Query         string         `json:"query,omitempty"`
	OperationName string         `json:"operationName,omitempty"`
	Variables     map[string]any `json:"variables,omitempty"`
}

// graphQLResponse is the envelope of an answer.
type graphQLResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

// readTask is one task of the nested read, in a form common to all servers.
type readTask struct {
	DisplayID string
	Impacts   []string // "path operation"
	Rels      []readRel
}

type readRel struct {
	Type          string
	Target        string // display id
	TargetImpacts []string
}

// objects counts the objects of a nested read: tasks, relationships,
// targets and file impacts.
func objects(tasks []readTask) int {
	n := len(tasks)
	for _, t := range tasks {
		n += len(t.Impacts)
		for _, r := range t.Rels {
			n += 2 + len(r.TargetImpacts) // the relationship and its target
		}
	}
	return n
}

// fingerprint is a canonical text of a nested read: tasks in list order,
// relationships and file impacts sorted (servers order those differently).
func fingerprint(tasks []readTask) string {
	var b strings.Builder
	for _, t := range tasks {
		impacts := slices.Sorted(slices.Values(t.Impacts))
		fmt.Fprintf(&b, "%s %v\n", t.DisplayID, impacts)
		rels := make([]string, 0, len(t.Rels))
		for _, r := range t.Rels {
			rels = append(rels, fmt.Sprintf("  %s %s %v", r.Type, r.Target, slices.Sorted(slices.Values(r.TargetImpacts))))
		}
		slices.Sort(rels)
		for _, r := range rels {
			b.WriteString(r + "\n")
		}
	}
	return b.String()
}

// The answers' shapes: Taskgraph's (and the floor's, which copies it) has
// lists; PostGraphile's has connections with nodes and list items around
// the tasks.
type (
	impactJSON struct {
		ID        string `json:"id"`
		FilePath  string `json:"filePath"`
		Operation string `json:"operation"`
	}
	tgTask struct {
		ID            string       `json:"id"`
		DisplayID     string       `json:"displayId"`
		Title         string       `json:"title"`
		Status        string       `json:"status"`
		Relationships []tgRel      `json:"relationships,omitempty"`
		FileImpacts   []impactJSON `json:"fileImpacts"`
	}
	tgRel struct {
		ID     string `json:"id"`
		Type   string `json:"type"`
		Target tgTask `json:"target"`
	}
	tgRead struct {
		TaskList *struct {
			Tasks struct {
				Nodes []tgTask `json:"nodes"`
			} `json:"tasks"`
		} `json:"taskList"`
	}

	pgImpacts struct {
		Nodes []impactJSON `json:"nodes"`
	}
	pgTask struct {
		DisplayID     string `json:"displayId"`
		Relationships struct {
			Nodes []struct {
				Type   string `json:"type"`
				Target struct {
					DisplayID   string    `json:"displayId"`
					FileImpacts pgImpacts `json:"fileImpacts"`
				} `json:"target"`
			} `json:"nodes"`
		} `json:"relationships"`
		FileImpacts pgImpacts `json:"fileImpacts"`
	}
	pgRead struct {
		TaskList *struct {
			Tasks struct {
				Nodes []struct {
					Task pgTask `json:"task"`
				} `json:"nodes"`
			} `json:"tasks"`
		} `json:"taskList"`
	}
)

// decodeData checks a GraphQL answer for errors and decodes its data.
func decodeData(body []byte, into any) error {
	var r graphQLResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("answer is not JSON (%v): %.300s", err, body)
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("answer has errors: %.500s", body)
	}
	if len(r.Data) == 0 || string(r.Data) == "null" {
		return fmt.Errorf("answer has no data: %.300s", body)
	}
	return json.Unmarshal(r.Data, into)
}

func impactKeys(in []impactJSON) []string {
	out := make([]string, len(in))
	for i, f := range in {
		out[i] = f.FilePath + " " + f.Operation
	}
	return out
}

// decodeTaskgraphRead reads Taskgraph's (or the floor's) answer.
func decodeTaskgraphRead(body []byte) ([]readTask, error) {
	var d tgRead
	if err := decodeData(body, &d); err != nil {
		return nil, err
	}
	if d.TaskList == nil {
		return nil, fmt.Errorf("taskList is null")
	}
	var out []readTask
	for _, t := range d.TaskList.Tasks.Nodes {
		rt := readTask{DisplayID: t.DisplayID, Impacts: impactKeys(t.FileImpacts)}
		for _, r := range t.Relationships {
			rt.Rels = append(rt.Rels, readRel{Type: r.Type, Target: r.Target.DisplayID, TargetImpacts: impactKeys(r.Target.FileImpacts)})
		}
		out = append(out, rt)
	}
	return out, nil
}

// decodePostGraphileRead reads PostGraphile 4's or 5's answer.
func decodePostGraphileRead(body []byte) ([]readTask, error) {
	var d pgRead
	if err := decodeData(body, &d); err != nil {
		return nil, err
	}
	if d.TaskList == nil {
		return nil, fmt.Errorf("taskList is null")
	}
	var out []readTask
	for _, n := range d.TaskList.Tasks.Nodes {
		t := n.Task
		rt := readTask{DisplayID: t.DisplayID, Impacts: impactKeys(t.FileImpacts.Nodes)}
		for _, r := range t.Relationships.Nodes {
			rt.Rels = append(rt.Rels, readRel{Type: r.Type, Target: r.Target.DisplayID, TargetImpacts: impactKeys(r.Target.FileImpacts.Nodes)})
		}
		out = append(out, rt)
	}
	return out, nil
}

// createdTask reads the id and display id of a createTask answer.
func createdTask(body []byte) (id, displayID string, err error) {
	var d struct {
		CreateTask *struct {
			Task struct {
				ID        string `json:"id"`
				DisplayID string `json:"displayId"`
			} `json:"task"`
		} `json:"createTask"`
	}
	if err := decodeData(body, &d); err != nil {
		return "", "", err
	}
	if d.CreateTask == nil || d.CreateTask.Task.ID == "" || d.CreateTask.Task.DisplayID == "" {
		return "", "", fmt.Errorf("createTask answered no task: %.300s", body)
	}
	return d.CreateTask.Task.ID, d.CreateTask.Task.DisplayID, nil
}
