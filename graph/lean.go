package graph

import (
	"context"
	"sort"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/taskgraph/taskgraph/internal/app"
)

// LeanTaskFields are the fields of Task a lean read of tasks answers as a
// full one does, each with the fields of domain.Task it shows (a lean read
// always has the id and the project): the plain fields, and the resolvers
// that use only those. A field missing here (the rules: validation,
// relevantLessons) makes an operation that selects it read tasks in full,
// so a new field is safe until it is added.
var LeanTaskFields = map[string][]string{
	"__typename": nil, "id": nil, "displayId": {"DisplayID"}, "title": {"Title"}, "description": {"Description"},
	"category": {"Category"}, "status": {"Status"}, "priority": {"Priority"}, "priorityScore": {"PriorityScore"},
	"blocksCount": {"BlocksCount"}, "isQuickWin": {"IsQuickWin"}, "riskLevel": {"RiskLevel"}, "effort": {"Effort"},
	"owner": {"Owner"}, "phase": {"Phase"}, "deadline": {"Deadline"}, "acceptanceCriteria": {"AcceptanceCriteria"},
	"codebaseTests": {"CodebaseTests"}, "apiTests": {"APITests"}, "uiTests": {"UITests"}, "affectedFiles": {"AffectedFiles"},
	"actualEffortMinutes": {"ActualEffortMinutes"}, "executionLog": {"ExecutionLog"}, "inEvaluationQueue": {"Queue"},
	"version": {"Version"}, "embeddingModel": {"EmbeddingModel"}, "embedding": {"Embedding"}, "createdAt": {"CreatedAt"},
	"updatedAt": {"UpdatedAt"}, "startedAt": {"StartedAt"}, "completedAt": {"CompletedAt"}, "createdBy": {"UserID"},
	"project": nil, "idea": {"IdeaID"}, "parentTask": {"ParentTaskID"}, "supersedes": {"SupersedesTaskID"},
	"taskList": {"TaskListID"}, "listItem": nil, "relationships": nil, "dependencies": nil, "dependents": nil,
	"subtasks": nil, "stateHistory": nil, "blocks": nil, "fileImpacts": nil, "conflicts": nil, "questions": nil,
	"executions": nil, "testResults": nil, "assignedAgent": {"AssignedAgentID"},
}

// LeanFileImpactFields are the fields of TaskFileImpact a lean read of
// impacts answers as a full one does, each with the fields of
// domain.TaskFileImpact it shows (a lean read always has the id and the
// task).
var LeanFileImpactFields = map[string][]string{
	"__typename": nil, "id": nil, "task": nil, "filePath": {"FilePath"}, "operation": {"Operation"},
	"confidence": {"Confidence"}, "source": {"Source"}, "wasAccurate": {"WasAccurate"}, "validatedAt": {"ValidatedAt"},
	"createdAt": {"CreatedAt"}, "updatedAt": {"UpdatedAt"},
}

// LeanRelationshipFields are the fields of TaskRelationship a lean read of
// links answers as a full one does, each with the fields of
// domain.TaskRelationship it shows (a lean read always has the id, the ends
// and the type).
var LeanRelationshipFields = map[string][]string{
	"__typename": nil, "id": nil, "type": nil, "source": nil, "target": nil, "strength": {"Strength"},
	"notes": {"Notes"}, "createdAt": {"CreatedAt"}, "createdBy": {"CreatedByID"},
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
	w := leanWalk{fragments: map[string]bool{}, shown: map[string]*shown{
		"Task":             {lean: true, fields: LeanTaskFields, show: map[string]bool{}},
		"TaskFileImpact":   {lean: true, fields: LeanFileImpactFields, show: map[string]bool{}},
		"TaskRelationship": {lean: true, fields: LeanRelationshipFields, show: map[string]bool{}},
	}}
	w.walk(op.Operation.SelectionSet)
	return app.Lean{Tasks: w.shown["Task"].result(), FileImpacts: w.shown["TaskFileImpact"].result(),
		Relationships: w.shown["TaskRelationship"].result()}
}

// shown is what the walk has found an operation shows of one type.
type shown struct {
	lean   bool                // every field selected so far is in fields
	fields map[string][]string // the type's lean fields (LeanTaskFields…)
	show   map[string]bool     // the domain fields they show
}

func (s *shown) result() app.Shown {
	if !s.lean {
		return app.Shown{}
	}
	out := app.Shown{Lean: true}
	for f := range s.show {
		out.Fields = append(out.Fields, f)
	}
	sort.Strings(out.Fields)
	return out
}

type leanWalk struct {
	shown     map[string]*shown // by type name
	fragments map[string]bool   // spread already walked
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
	s := w.shown[typeName]
	if s == nil || !s.lean {
		return
	}
	needs, ok := s.fields[field]
	if !ok {
		s.lean = false
		return
	}
	for _, f := range needs {
		s.show[f] = true
	}
}
