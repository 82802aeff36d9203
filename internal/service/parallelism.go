package service

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/planning"
	"github.com/taskgraph/taskgraph/internal/store"
)

// The parallelism analysis of a list: the pairs of tasks a materialised plan
// kept apart, and why. wavePlan computes the same conflicts but writes nothing;
// only a run that materialises its plan records them, so the rows say what the
// waves of that run were made from.
//
// Lifecycle of a row: written by startRun (after the list's earlier current
// rows are invalidated: the new plan supersedes them); invalidated, inside the
// same transaction as the change, when either task's file impacts change, a
// DEPENDS_ON, BLOCKS or CONFLICTS_WITH link of either task is added or removed,
// or the task moves to another list. Invalidated rows stay as history.

// recordAnalysis replaces the list's current analysis with the pairs of plan
// (computed from in) among the tasks keep accepts: one row per pair, can_parallel
// false, the strongest conflict as its type and every reason in its details.
func recordAnalysis(ctx context.Context, tx *app.Tx, listID string, in planning.Input, plan *planning.Plan,
	keep func(string) bool, now time.Time,
) error {
	if err := tx.Planning.InvalidateAnalysesOfList(ctx, listID, now); err != nil {
		return err
	}
	pairs := planning.Pairs(in, plan, keep)
	rows := make([]*domain.ParallelismAnalysis, 0, len(pairs))
	for i := range pairs {
		row, err := analysisRow(listID, &pairs[i], now)
		if err != nil {
			return err
		}
		rows = append(rows, row)
	}
	return tx.Planning.InsertAnalyses(ctx, rows)
}

// analysisRow turns a conflicting pair into its row.
func analysisRow(listID string, p *planning.Pair, now time.Time) (*domain.ParallelismAnalysis, error) {
	d := domain.ConflictDetails{Types: p.Types()}
	link := func(l planning.Link) *domain.ConflictLink {
		return &domain.ConflictLink{RelationshipType: l.Type,
			SourceTaskID: domain.GlobalID(domain.KindTask, l.Source), TargetTaskID: domain.GlobalID(domain.KindTask, l.Target)}
	}
	for _, l := range p.Dependencies {
		c := link(l)
		// OrderingEdge: `from` waits on `to`, so `to` runs first.
		if _, first := domain.OrderingEdge(l.Type, l.Source, l.Target); first == p.A {
			c.Order = domain.OrderABeforeB
		} else {
			c.Order = domain.OrderBBeforeA
		}
		d.Dependencies = append(d.Dependencies, c)
	}
	for _, f := range p.Files {
		d.Files = append(d.Files, &domain.ConflictedFile{FilePath: f.Path, Operations: []domain.FileOperation{f.OpA, f.OpB}})
	}
	for _, l := range p.Resources {
		d.Resources = append(d.Resources, link(l))
	}
	if len(d.Types) == 0 {
		return nil, fmt.Errorf("parallelism analysis: pair %s/%s has no conflict", p.A, p.B)
	}
	d.Normalize()
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	typ := domain.StrongestConflict(d.Types...)
	return &domain.ParallelismAnalysis{ID: app.NewID(), TaskListID: &listID, TaskAID: p.A, TaskBID: p.B,
		CanParallel: false, ConflictType: &typ, ConflictDetails: domain.JSON(b), AnalyzedAt: now}, nil
}

// ConflictsOfTask lists a task's current analysis rows (where it is task A or
// task B), oldest analysis first. The task was authorized by the field's parent.
func (s *Lists) ConflictsOfTask(ctx context.Context, taskID string) ([]*domain.ParallelismAnalysis, error) {
	return children(ctx, s.exec(ctx).conflictsOfTask, taskID)
}

// AnalysisOfList pages a list's analysis rows, newest analysis first: the
// current ones, and the invalidated ones too with includeInvalidated. The list
// was authorized by the field's parent.
func (s *Lists) AnalysisOfList(ctx context.Context, listID string, page domain.PageArgs, includeInvalidated bool) (domain.Page[*domain.ParallelismAnalysis], error) {
	args := struct {
		Page               domain.PageArgs
		IncludeInvalidated bool
	}{page, includeInvalidated}
	return app.NestedPage(ctx, s.db, "TaskList.parallelismAnalysis", args, listID,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.ParallelismAnalysis], error) {
			return q.Planning.AnalysesByLists(ctx, parents, page, includeInvalidated)
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Planning.CountAnalysesByLists(ctx, parents, includeInvalidated)
		})
}
