package domain

import (
	"encoding/json"
	"fmt"
	"time"
)

// ParallelismAnalysis is the verdict on one pair of tasks of a materialised plan:
// whether they may run at the same time and, when not, why. One row per pair
// (TaskAID < TaskBID, the table's canonical order), written when a run
// materialises its plan and invalidated — never deleted — when either task's file
// impacts or planning links change, or when a newer plan of the list supersedes
// it. An invalidated row is history: it says what the plan was made from.
type ParallelismAnalysis struct {
	ID          string  `db:"id"`
	TaskListID  *string `db:"task_list_id"`
	TaskAID     string  `db:"task_a_id"`
	TaskBID     string  `db:"task_b_id"`
	CanParallel bool    `db:"can_parallel"`
	// ConflictType is the strongest kind of conflict of the pair (StrongestConflict).
	ConflictType *ConflictType `db:"conflict_type"`
	// ConflictDetails is a ConflictDetails document.
	ConflictDetails JSON       `db:"conflict_details"`
	AnalyzedAt      time.Time  `db:"analyzed_at"`
	InvalidatedAt   *time.Time `db:"invalidated_at"`
}

// GlobalID is the id clients see.
func (a *ParallelismAnalysis) GlobalID() string { return GlobalID(KindParallelismAnalysis, a.ID) }

// Valid reports whether the row still describes its tasks as they are.
func (a *ParallelismAnalysis) Valid() bool { return a.InvalidatedAt == nil }

// Details decodes ConflictDetails; an empty document gives empty lists.
func (a *ParallelismAnalysis) Details() (*ConflictDetails, error) {
	d := &ConflictDetails{}
	if len(a.ConflictDetails) > 0 {
		if err := json.Unmarshal(a.ConflictDetails, d); err != nil {
			return nil, fmt.Errorf("parallelism analysis %s: details: %w", a.ID, err)
		}
	}
	d.Normalize()
	return d, nil
}

// Files are the files both tasks touch with a conflicting pair of operations
// (the typed view of the details' "files").
func (a *ParallelismAnalysis) Files() ([]*ConflictedFile, error) {
	d, err := a.Details()
	if err != nil {
		return nil, err
	}
	return d.Files, nil
}

// ConflictDetails is the JSON document of a ParallelismAnalysis row. It lists
// every reason the pair cannot share a wave, whichever is the row's type:
//
//	{"types": ["DEPENDENCY", "FILE_CONFLICT"],
//	 "dependencies": [{"relationshipType": "DEPENDS_ON", "sourceTaskId": "…", "targetTaskId": "…", "order": "A_BEFORE_B"}],
//	 "files": [{"filePath": "a.go", "operations": ["UPDATE", "UPDATE"]}],
//	 "resources": [{"relationshipType": "CONFLICTS_WITH", "sourceTaskId": "…", "targetTaskId": "…"}]}
//
// Task ids are global ids; operations are taskA's then taskB's.
type ConflictDetails struct {
	// Types are the kinds of conflict the pair has, strongest first.
	Types []ConflictType `json:"types"`
	// Dependencies are the direct DEPENDS_ON / BLOCKS links between the tasks.
	Dependencies []*ConflictLink `json:"dependencies"`
	// Files are the files both touch with a conflicting pair of operations.
	Files []*ConflictedFile `json:"files"`
	// Resources are the CONFLICTS_WITH links between the tasks.
	Resources []*ConflictLink `json:"resources"`
}

// Normalize makes absent lists empty, so the document always has all four.
func (d *ConflictDetails) Normalize() {
	if d.Types == nil {
		d.Types = []ConflictType{}
	}
	if d.Dependencies == nil {
		d.Dependencies = []*ConflictLink{}
	}
	if d.Files == nil {
		d.Files = []*ConflictedFile{}
	}
	if d.Resources == nil {
		d.Resources = []*ConflictLink{}
	}
}

// ConflictedFile is one file two tasks touch with conflicting operations.
type ConflictedFile struct {
	FilePath string `json:"filePath"`
	// Operations are taskA's and taskB's operation on the file, in that order
	// (the first conflicting combination in the order CREATE, UPDATE, DELETE,
	// READ when a task has several).
	Operations []FileOperation `json:"operations"`
}

// Dependency orders of a ConflictLink: which task of the pair runs first.
const (
	OrderABeforeB = "A_BEFORE_B"
	OrderBBeforeA = "B_BEFORE_A"
)

// ConflictLink is a relationship that keeps two tasks apart.
type ConflictLink struct {
	RelationshipType RelationshipType `json:"relationshipType"`
	SourceTaskID     string           `json:"sourceTaskId"`
	TargetTaskID     string           `json:"targetTaskId"`
	// Order (dependencies only) is OrderABeforeB or OrderBBeforeA.
	Order string `json:"order,omitempty"`
}

// conflictStrength ranks the kinds of conflict: a dependency orders the pair
// whatever else holds, so it explains the most; a file conflict is a concrete
// clash found from the impacts; a resource conflict is only declared.
var conflictStrength = map[ConflictType]int{ConflictDependency: 3, ConflictFile: 2, ConflictResource: 1}

// StrongestConflict is the kind that names a pair with several kinds of
// conflict: DEPENDENCY > FILE_CONFLICT > RESOURCE_CONFLICT. Empty for none.
func StrongestConflict(types ...ConflictType) ConflictType {
	var best ConflictType
	for _, t := range types {
		if conflictStrength[t] > conflictStrength[best] {
			best = t
		}
	}
	return best
}

// PlanningLink reports whether a relationship type changes a plan: the
// ordering links (DEPENDS_ON, BLOCKS) and CONFLICTS_WITH. Only these
// invalidate a parallelism analysis when added or removed.
func PlanningLink(t RelationshipType) bool {
	return t == RelDependsOn || t == RelBlocks || t == RelConflictsWith
}
