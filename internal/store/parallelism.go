package store

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// The parallelism analysis of materialised plans (table parallelism_analysis).
// Rows are never deleted by the application: a row stops being current when
// invalidated_at is set, and stays readable as history.

const analysisColumns = `id, task_list_id, task_a_id, task_b_id, can_parallel, conflict_type, conflict_details,
	analyzed_at, invalidated_at`

// analysisBatch bounds the rows of one INSERT: 9 parameters a row stays far
// below the parameter limits of SQLite (32766) and PostgreSQL (65535).
const analysisBatch = 500

// InsertAnalyses writes the analysis rows of one plan, in multi-row INSERTs of
// up to analysisBatch rows: one statement for any usual list.
func (q PlanningQueries) InsertAnalyses(ctx context.Context, rows []*domain.ParallelismAnalysis) error {
	for start := 0; start < len(rows); start += analysisBatch {
		if err := q.Runs.insert(ctx, "parallelism_analysis", analysisColumns, rows[start:min(start+analysisBatch, len(rows))]); err != nil {
			return err
		}
	}
	return nil
}

// InvalidateAnalysesOfList marks every current row of a list invalidated at
// now (a new plan supersedes them).
func (q PlanningQueries) InvalidateAnalysesOfList(ctx context.Context, listID string, now time.Time) error {
	_, err := q.exec(ctx, `UPDATE parallelism_analysis SET invalidated_at = ?
		WHERE task_list_id = ? AND invalidated_at IS NULL`, now, listID)
	return err
}

// InvalidateAnalysesOfTasks marks every current row that names one of the
// tasks (as task A or task B) invalidated at now.
func (q PlanningQueries) InvalidateAnalysesOfTasks(ctx context.Context, taskIDs []string, now time.Time) error {
	if len(taskIDs) == 0 {
		return nil
	}
	query, args := in(`UPDATE parallelism_analysis SET invalidated_at = ?
		WHERE (task_a_id IN (?) OR task_b_id IN (?)) AND invalidated_at IS NULL`, now, taskIDs, taskIDs)
	_, err := q.exec(ctx, query, args...)
	return err
}

// AnalysesByIDs loads analysis rows by id, current or not.
func (q PlanningQueries) AnalysesByIDs(ctx context.Context, ids []string) ([]*domain.ParallelismAnalysis, error) {
	return byIDs[domain.ParallelismAnalysis](ctx, q.Q, "parallelism_analysis", ids)
}

// CurrentAnalysesOfTasks lists the current (not invalidated) rows that name
// one of the tasks as task A or task B, oldest analysis first: one statement
// for every task of a request level.
func (q PlanningQueries) CurrentAnalysesOfTasks(ctx context.Context, taskIDs []string) ([]*domain.ParallelismAnalysis, error) {
	if len(taskIDs) == 0 {
		return nil, nil
	}
	query, args := in(`SELECT * FROM parallelism_analysis
		WHERE (task_a_id IN (?) OR task_b_id IN (?)) AND invalidated_at IS NULL
		ORDER BY analyzed_at, id`, taskIDs, taskIDs)
	var out []*domain.ParallelismAnalysis
	err := q.selectx(ctx, &out, query, args...)
	return out, err
}

func analysisPageQuery(lists []string, page domain.PageArgs, includeInvalidated bool) *pageQuery[*domain.ParallelismAnalysis] {
	pq := &pageQuery[*domain.ParallelismAnalysis]{
		selectCols: "pa.*", from: "parallelism_analysis pa", idCol: "pa.id",
		key:       sortKey{col: "pa.analyzed_at", kind: keyTime, desc: true},
		keyOf:     func(a *domain.ParallelismAnalysis) any { return a.AnalyzedAt },
		idOf:      func(a *domain.ParallelismAnalysis) string { return a.ID },
		parentCol: "pa.task_list_id", parents: lists,
		parentOf: func(a *domain.ParallelismAnalysis) string {
			if a.TaskListID == nil {
				return ""
			}
			return *a.TaskListID
		},
		page: page,
	}
	if !includeInvalidated {
		pq.filter("pa.invalidated_at IS NULL")
	}
	return pq
}

// AnalysesByLists pages the analysis rows of lists, newest analysis first
// (ties by id): the current rows only unless includeInvalidated.
func (q PlanningQueries) AnalysesByLists(ctx context.Context, lists []string, page domain.PageArgs, includeInvalidated bool) (map[string]domain.Page[*domain.ParallelismAnalysis], error) {
	return analysisPageQuery(lists, page, includeInvalidated).fetch(ctx, q.Q)
}

// CountAnalysesByLists counts the rows AnalysesByLists pages, per list.
func (q PlanningQueries) CountAnalysesByLists(ctx context.Context, lists []string, includeInvalidated bool) (map[string]int, error) {
	return analysisPageQuery(lists, domain.PageArgs{}, includeInvalidated).count(ctx, q.Q)
}
