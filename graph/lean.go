package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/taskgraph/taskgraph/internal/app"
)

// LeanTaskFields are the fields of Task a lean read of tasks answers as a
// full one does: the plain fields of the columns it reads, and the fields
// whose resolvers use only those (ids, project, queue). A field missing
// here makes an operation that selects it read tasks in full, so a new
// field is safe until it is added.
var LeanTaskFields = map[string]bool{
	"__typename": true, "id": true, "displayId": true, "title": true, "category": true, "status": true,
	"priority": true, "priorityScore": true, "blocksCount": true, "isQuickWin": true, "riskLevel": true,
	"effort": true, "owner": true, "phase": true, "actualEffortMinutes": true, "inEvaluationQueue": true,
	"version": true, "createdAt": true, "createdBy": true, "project": true, "idea": true, "parentTask": true,
	"supersedes": true, "taskList": true, "listItem": true, "relationships": true, "dependencies": true,
	"dependents": true, "subtasks": true, "stateHistory": true, "blocks": true, "fileImpacts": true,
	"conflicts": true, "questions": true,
}

// LeanFileImpactFields are the fields of TaskFileImpact a lean read of
// impacts answers as a full one does.
var LeanFileImpactFields = map[string]bool{
	"__typename": true, "id": true, "task": true, "filePath": true, "operation": true, "confidence": true, "source": true,
}

// LeanReads is what ctx's operation may read lean: the entities of which it
// selects only fields a lean read answers, wherever and however it selects
// them (fragments and fields of interfaces they implement included, @skip
// and @include ignored).
func LeanReads(ctx context.Context) app.Lean {
	if !graphql.HasOperationContext(ctx) {
		return app.Lean{}
	}
	op := graphql.GetOperationContext(ctx)
	if op.Operation == nil {
		return app.Lean{}
	}
	lean := app.Lean{Tasks: true, FileImpacts: true}
	w := leanWalk{lean: &lean, fragments: map[string]bool{}}
	w.walk(op.Operation.SelectionSet)
	return lean
}

type leanWalk struct {
	lean      *app.Lean
	fragments map[string]bool // spread already walked
}

func (w leanWalk) walk(set ast.SelectionSet) {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			switch def := s.ObjectDefinition; {
			case def == nil:
			case def.Kind == ast.Object:
				w.field(def.Name, s.Name)
			default: // an interface or union: the field of each type it may be
				for _, t := range parsedSchema.GetPossibleTypes(def) {
					w.field(t.Name, s.Name)
				}
			}
			w.walk(s.SelectionSet)
		case *ast.InlineFragment:
			w.walk(s.SelectionSet)
		case *ast.FragmentSpread:
			if !w.fragments[s.Name] && s.Definition != nil {
				w.fragments[s.Name] = true
				w.walk(s.Definition.SelectionSet)
			}
		}
	}
}

// field notes that the operation selects field of typeName.
func (w leanWalk) field(typeName, field string) {
	switch typeName {
	case "Task":
		w.lean.Tasks = w.lean.Tasks && LeanTaskFields[field]
	case "TaskFileImpact":
		w.lean.FileImpacts = w.lean.FileImpacts && LeanFileImpactFields[field]
	}
}
