package domain

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// What the design keeps of planners and workers beyond their state: a
// planner's account of its workers' work and its check of the user's
// request, a worker's failed validations, and the shape of a worker's task
// context and tables.

// Limits of the records.
const (
	MaxWorkings       = 200 // entries of a planner's workings
	MaxWorkerFailures = 50  // a worker keeps its newest failures
	MaxTables         = 100 // tables of a worker
	MaxTableColumns   = 500 // columns of a table
)

// PlannerWorking is one entry of a planner's account of its work: what a
// worker (when it names one) did and how it came out.
type PlannerWorking struct {
	WorkerID    *string `json:"workerId,omitempty"` // the worker's row id
	Title       string  `json:"title"`
	Description *string `json:"description,omitempty"`
	Outcome     *string `json:"outcome,omitempty"`
}

// PlannerWorkingInput is an entry of updatePlanner's workings.
type PlannerWorkingInput struct {
	WorkerID    *string // global id
	Title       string
	Description *string
	Outcome     *string
}

// PlannerWorkings is a planner's workings, kept in one JSON column.
type PlannerWorkings []PlannerWorking

// Value stores the list as a JSON array.
func (w PlannerWorkings) Value() (driver.Value, error) { return jsonValue(w) }

// Scan reads a JSON array column.
func (w *PlannerWorkings) Scan(src any) error { return jsonScan(src, w) }

// PlannerRequestValidation is a planner's check of the user's request.
type PlannerRequestValidation struct {
	UserRequestFulfilled bool   `json:"userRequestFulfilled"`
	ProgressSummary      string `json:"progressSummary"`
}

// Value stores the validation as a JSON object.
func (v *PlannerRequestValidation) Value() (driver.Value, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// Scan reads a JSON object column (NULL: none).
func (v *PlannerRequestValidation) Scan(src any) error { return jsonScan(src, v) }

// WorkerFailure is one FAILED_VALIDATION of a worker.
type WorkerFailure struct {
	Attempt        int       `json:"attempt"`
	FailedCriteria []string  `json:"failedCriteria"`
	Message        *string   `json:"message,omitempty"`
	At             time.Time `json:"at"`
}

// WorkerFailures is a worker's failures, oldest first, in one JSON column.
type WorkerFailures []WorkerFailure

// Value stores the list as a JSON array.
func (f WorkerFailures) Value() (driver.Value, error) { return jsonValue(f) }

// Scan reads a JSON array column.
func (f *WorkerFailures) Scan(src any) error { return jsonScan(src, f) }

// Add records a failure, keeping the newest MaxWorkerFailures.
func (f WorkerFailures) Add(x WorkerFailure) WorkerFailures {
	out := append(f, x)
	if n := len(out); n > MaxWorkerFailures {
		out = slices.Clone(out[n-MaxWorkerFailures:])
	}
	return out
}

// ThreeIdentical reports whether the last three failures are alike: the
// same failed criteria (in any order) and the same message — the design's
// sign that retrying will not help.
func (f WorkerFailures) ThreeIdentical() bool {
	if len(f) < 3 {
		return false
	}
	last := f[len(f)-3:]
	key := func(x WorkerFailure) string {
		c := slices.Clone(x.FailedCriteria)
		slices.Sort(c)
		b, _ := json.Marshal([]any{c, x.Message})
		return string(b)
	}
	return key(last[0]) == key(last[1]) && key(last[1]) == key(last[2])
}

// CheckTaskContext checks a worker's taskContext: an object whose fields
// userRequest, context and previousOutputs, each optional, are strings.
func CheckTaskContext(raw JSON) error {
	if raw == nil {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return InputError("taskContext", "taskContext must be an object {userRequest, context, previousOutputs}")
	}
	for k, v := range m {
		switch k {
		case "userRequest", "context", "previousOutputs":
			if !isJSONString(v) {
				return InputError("taskContext."+k, "taskContext.%s must be a string", k)
			}
		default:
			return InputError("taskContext."+k, "taskContext has no field %q (userRequest, context, previousOutputs)", k)
		}
	}
	return nil
}

// CheckTables checks a worker's tables: a list of {tableName, rowCount,
// top10Md, columns: [{columnName, pctDistinct, min, max, top3Values}]}.
func CheckTables(raw JSON) error {
	if raw == nil {
		return nil
	}
	var tables []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tables); err != nil {
		return InputError("tables", "tables must be a list of {tableName, rowCount, top10Md, columns}")
	}
	if len(tables) > MaxTables {
		return InputError("tables", "at most %d tables", MaxTables)
	}
	for i, t := range tables {
		at := fmt.Sprintf("tables[%d]", i)
		if t == nil {
			return InputError(at, "%s must be an object {tableName, rowCount, top10Md, columns}", at)
		}
		for k, v := range t {
			f := at + "." + k
			switch k {
			case "tableName", "top10Md":
				if !isJSONString(v) {
					return InputError(f, "%s must be a string", f)
				}
			case "rowCount":
				var n int64
				if err := json.Unmarshal(v, &n); err != nil || n < 0 {
					return InputError(f, "%s must be a whole number, 0 or more", f)
				}
			case "columns":
				if err := checkColumns(f, v); err != nil {
					return err
				}
			default:
				return InputError(f, "%s has no field %q (tableName, rowCount, top10Md, columns)", at, k)
			}
		}
		if _, ok := t["tableName"]; !ok {
			return InputError(at+".tableName", "%s needs a tableName", at)
		}
	}
	return nil
}

func checkColumns(at string, raw json.RawMessage) error {
	var cols []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &cols); err != nil {
		return InputError(at, "%s must be a list of {columnName, pctDistinct, min, max, top3Values}", at)
	}
	if len(cols) > MaxTableColumns {
		return InputError(at, "at most %d columns", MaxTableColumns)
	}
	for i, c := range cols {
		ca := fmt.Sprintf("%s[%d]", at, i)
		if c == nil {
			return InputError(ca, "%s must be an object {columnName, pctDistinct, min, max, top3Values}", ca)
		}
		for k, v := range c {
			f := ca + "." + k
			switch k {
			case "columnName":
				if !isJSONString(v) {
					return InputError(f, "%s must be a string", f)
				}
			case "pctDistinct":
				var p float64
				if err := json.Unmarshal(v, &p); err != nil || p < 0 || p > 100 {
					return InputError(f, "%s must be a number from 0 to 100", f)
				}
			case "min", "max":
				if !isJSONScalar(v) {
					return InputError(f, "%s must be a string, a number or null", f)
				}
			case "top3Values":
				var vals []json.RawMessage
				if err := json.Unmarshal(v, &vals); err != nil || len(vals) > 3 {
					return InputError(f, "%s must be a list of at most 3 values", f)
				}
				for _, x := range vals {
					if !isJSONScalar(x) {
						return InputError(f, "%s holds strings, numbers or nulls", f)
					}
				}
			default:
				return InputError(f, "%s has no field %q (columnName, pctDistinct, min, max, top3Values)", ca, k)
			}
		}
		if _, ok := c["columnName"]; !ok {
			return InputError(ca+".columnName", "%s needs a columnName", ca)
		}
	}
	return nil
}

func isJSONString(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '"'
}

// isJSONScalar: a string, a number, a boolean or null.
func isJSONScalar(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] != '{' && v[0] != '['
}

// ThreeIdenticalFailures: see WorkerFailures.ThreeIdentical.
func (w *Worker) ThreeIdenticalFailures() bool { return w.Failures.ThreeIdentical() }
