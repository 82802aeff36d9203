package main

import "strings"

// The four nested-read shapes. Each reads the first page of a task list's
// tasks in list order; they differ in what they ask of each task. Taskgraph
// goes taskList → tasks; PostGraphile goes through the list's items ordered
// by position (taskListItemsByTaskListId → taskByTaskId), with aliases that
// give its answer Taskgraph's field names. In PostGraphile 5 the id column is
// rowId (its id is the node id); ROW_ID and LIST_BY_ID stand for each
// version's names.

// readShape is one nested read as every server asks it.
type readShape struct {
	key   string // full, light, deep, wide: the scenario's name
	title string // the report's heading
	op    string // operation name: the floor answers by it
	// taskgraph is Taskgraph's query (the floor gets it too and reads only
	// its operation name and variables); postgraphile is PostGraphile's,
	// with ROW_ID and LIST_BY_ID to replace.
	taskgraph, postgraphile string
	// ordered: the servers answer children in the same defined order, so
	// the check compares them in order; otherwise as sorted sets (each
	// server orders them its own way).
	ordered bool
}

// readShapes are the shapes in report order.
var readShapes = []readShape{
	{
		key: "full", op: "ReadFull",
		title: "Nested read, full: taskList → tasks → relationships → target → fileImpacts, plus each task's fileImpacts; ids on every object",
		taskgraph: `query ReadFull($id: ID!, $first: Int!) {
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
}`,
		postgraphile: `query ReadFull($id: UUID!, $first: Int!) {
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
}`,
	},
	{
		key: "light", op: "ReadLight", ordered: true,
		title: "Nested read, light: the full tree with ids only on tasks, children in a defined order",
		taskgraph: `query ReadLight($id: ID!, $first: Int!) {
  taskList(id: $id) {
    tasks(first: $first) {
      nodes {
        id displayId title status
        relationships(direction: OUTGOING) {
          type
          target { displayId title status fileImpacts { filePath operation } }
        }
        fileImpacts { filePath operation }
      }
    }
  }
}`,
		// Taskgraph answers relationships by creation (created_at, id) and
		// file impacts by path (file_path, operation, id). PostGraphile 5
		// orders only by indexed columns: relationships by primary key,
		// which is the creation order (Taskgraph's ids are UUIDv7, made in
		// time order), impacts by path, then primary key (a task names a
		// path once in the fill). The check compares in order.
		postgraphile: `query ReadLight($id: UUID!, $first: Int!) {
  taskList: LIST_BY_ID {
    tasks: taskListItemsByTaskListId(first: $first, orderBy: POSITION_ASC) {
      nodes {
        task: taskByTaskId {
          ROW_ID displayId title status
          relationships: taskRelationshipsBySourceTaskId(orderBy: PRIMARY_KEY_ASC) {
            nodes {
              type: relationshipType
              target: taskByTargetTaskId {
                displayId title status
                fileImpacts: taskFileImpactsByTaskId(orderBy: [FILE_PATH_ASC, PRIMARY_KEY_ASC]) { nodes { filePath operation } }
              }
            }
          }
          fileImpacts: taskFileImpactsByTaskId(orderBy: [FILE_PATH_ASC, PRIMARY_KEY_ASC]) { nodes { filePath operation } }
        }
      }
    }
  }
}`,
	},
	{
		key: "deep", op: "ReadDeep",
		title: "Nested read, deep: taskList → tasks → relationships → target → relationships → target",
		taskgraph: `query ReadDeep($id: ID!, $first: Int!) {
  taskList(id: $id) {
    tasks(first: $first) {
      nodes {
        id displayId title status
        relationships(direction: OUTGOING) {
          id type
          target {
            id displayId title status
            relationships(direction: OUTGOING) { id type target { id displayId title status } }
          }
        }
      }
    }
  }
}`,
		postgraphile: `query ReadDeep($id: UUID!, $first: Int!) {
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
                relationships: taskRelationshipsBySourceTaskId {
                  nodes { ROW_ID type: relationshipType target: taskByTargetTaskId { ROW_ID displayId title status } }
                }
              }
            }
          }
        }
      }
    }
  }
}`,
	},
	{
		key: "wide", op: "ReadWide", ordered: true,
		title: "Nested read, wide: tasks × every scalar field with a column PostGraphile exposes, no children",
		taskgraph: `query ReadWide($id: ID!, $first: Int!) {
  taskList(id: $id) {
    tasks(first: $first) {
      nodes { id ` + wideFields + ` }
    }
  }
}`,
		postgraphile: `query ReadWide($id: UUID!, $first: Int!) {
  taskList: LIST_BY_ID {
    tasks: taskListItemsByTaskListId(first: $first, orderBy: POSITION_ASC) {
      nodes { task: taskByTaskId { ROW_ID ` + wideFields + ` } }
    }
  }
}`,
	},
}

// wideFields are Task's scalar fields (not objects, not lists) that are a
// column of tasks under the same name in PostGraphile's schema, besides the
// id. Left out: inEvaluationQueue (Taskgraph derives it from the queue
// column), and the lists (acceptanceCriteria, …, embedding).
const wideFields = `displayId title description category status priority priorityScore blocksCount isQuickWin
        riskLevel effort owner phase deadline actualEffortMinutes executionLog version embeddingModel
        createdAt updatedAt startedAt completedAt`

// shapeByKey finds a read shape; ok is false for a scenario that is not a
// read.
func shapeByKey(key string) (readShape, bool) {
	for _, s := range readShapes {
		if s.key == key {
			return s, true
		}
	}
	return readShape{}, false
}

// pg4Query and pg5Query are the shape's query in each PostGraphile's names.
func (s readShape) pg4Query() string {
	return strings.NewReplacer("LIST_BY_ID", "taskListById(id: $id)", "ROW_ID", "id").Replace(s.postgraphile)
}

func (s readShape) pg5Query() string {
	return strings.NewReplacer("LIST_BY_ID", "taskListByRowId(rowId: $id)", "ROW_ID", "id: rowId").Replace(s.postgraphile)
}
