package mcp

import (
	"context"
	"encoding/base64"
	"strings"
)

// isGlobalID reports whether ref is an API global id of the given kind
// (base64url of "Kind:uuid").
func isGlobalID(ref, kind string) bool {
	raw, err := base64.RawURLEncoding.DecodeString(ref)
	return err == nil && strings.HasPrefix(string(raw), kind+":")
}

// isDisplayID reports whether ref is a task's display id (TU-<PROJECT>-<CAT>-<NNN>).
func isDisplayID(ref string) bool {
	return len(ref) > 3 && strings.EqualFold(ref[:3], "TU-")
}

func notFound(field, what string) *toolError {
	return &toolError{Code: "NOT_FOUND", Message: what + " not found", Field: field, Hint: hints["NOT_FOUND"]}
}

// taskID resolves a task id or display id to the task's id.
func (c *call) taskID(ctx context.Context, field, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", badInput(field, field+" is required: a task id or display id (TU-…)")
	}
	if !isDisplayID(ref) {
		return ref, nil
	}
	var out struct{ Task *struct{ ID string } }
	if err := c.do(ctx, `query($d: String) { task(displayId: $d) { id } }`, map[string]any{"d": strings.ToUpper(ref)}, &out); err != nil {
		return "", err
	}
	if out.Task == nil {
		return "", notFound(field, "task "+ref)
	}
	return out.Task.ID, nil
}

// projectID resolves a project id or slug to the project's id.
func (c *call) projectID(ctx context.Context, field, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" || isGlobalID(ref, "Project") {
		return ref, nil
	}
	var out struct{ Project *struct{ ID string } }
	if err := c.do(ctx, `query($s: String) { project(slug: $s) { id } }`, map[string]any{"s": ref}, &out); err != nil {
		return "", err
	}
	if out.Project == nil {
		return "", notFound(field, "project "+ref)
	}
	return out.Project.ID, nil
}

// activeRunOf returns the run of a task list that claims go to: its active
// run (PENDING, RUNNING or PAUSED), else its newest.
func (c *call) activeRunOf(ctx context.Context, field, taskList string) (string, error) {
	var out struct {
		TaskList *struct {
			Runs []struct{ ID, Status string }
		}
	}
	if err := c.do(ctx, `query($l: ID!) { taskList(id: $l) { runs { id status } } }`, map[string]any{"l": taskList}, &out); err != nil {
		return "", err
	}
	if out.TaskList == nil {
		return "", notFound(field, "task list "+taskList)
	}
	for _, r := range out.TaskList.Runs {
		switch r.Status {
		case "PENDING", "RUNNING", "PAUSED":
			return r.ID, nil
		}
	}
	if len(out.TaskList.Runs) > 0 {
		return out.TaskList.Runs[0].ID, nil
	}
	return "", &toolError{Code: "CONFLICT", Message: "the task list has no run", Field: field,
		Hint: "Start one with start_run (a person or a MEMBER token), then claim again."}
}

// vars builds an operation's variables, leaving out empty optional values.
type vars map[string]any

func (v vars) str(key, val string) vars {
	if val != "" {
		v[key] = val
	}
	return v
}

func (v vars) list(key string, val []string) vars {
	if val != nil {
		v[key] = val
	}
	return v
}

func (v vars) opt(key string, val any) vars {
	switch x := val.(type) {
	case *int:
		if x != nil {
			v[key] = *x
		}
	case *float64:
		if x != nil {
			v[key] = *x
		}
	case *bool:
		if x != nil {
			v[key] = *x
		}
	default:
		if val != nil {
			v[key] = val
		}
	}
	return v
}
