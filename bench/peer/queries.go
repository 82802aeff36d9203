package main

import (
	"encoding/json"
	"fmt"
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
	return decodeNumbers(r.Data, into) // numbers in interfaces stay as written
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
