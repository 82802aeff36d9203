package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Embeddings: the dimension each model has in a project, and the stored
// vectors a similarity search reads page by page (tasks and lessons hold
// them as little-endian float32 in a BYTEA / BLOB column).

// EmbeddingDimension is the dimension of model's vectors in scope (a project
// id; "" for the global lessons): the one stored, or — model has no vector
// there yet — dims, stored now. Concurrent first vectors of a model agree on
// one dimension: the insert does nothing when another has stored it.
func (q TaskQueries) EmbeddingDimension(ctx context.Context, scope, model string, dims int) (int, error) {
	d, found, err := q.KnownDimension(ctx, scope, model)
	if found || err != nil {
		return d, err
	}
	if _, err := q.exec(ctx, `INSERT INTO embedding_models (scope, model, dimension) VALUES (?, ?, ?)
		ON CONFLICT (scope, model) DO NOTHING`, scope, model, dims); err != nil {
		return 0, err
	}
	err = q.get(ctx, &d, `SELECT dimension FROM embedding_models WHERE scope = ? AND model = ?`, scope, model)
	return d, err
}

// KnownDimension is the dimension of model's vectors in scope, if it has any.
func (q TaskQueries) KnownDimension(ctx context.Context, scope, model string) (int, bool, error) {
	var d int
	err := q.get(ctx, &d, `SELECT dimension FROM embedding_models WHERE scope = ? AND model = ?`, scope, model)
	if errors.Is(err, ErrNotFound) {
		return 0, false, nil
	}
	return d, err == nil, err
}

// StoredVector is one stored embedding: its row's id, its bytes, and for a
// lesson its confidence and (with a text query) its relevance.
type StoredVector struct {
	ID         string  `db:"id"`
	Embedding  []byte  `db:"embedding"`
	Confidence float64 `db:"confidence"`
	Rank       float64 `db:"rank"`
}

// TaskVectors reads up to limit of a project's task vectors of model, in id
// order after the id after ("" from the start).
func (q TaskQueries) TaskVectors(ctx context.Context, projectID, model, after string, limit int) ([]StoredVector, error) {
	cond, args := "", []any{projectID, model}
	if after != "" {
		cond, args = " AND t.id > ?", append(args, after)
	}
	var out []StoredVector
	err := q.selectx(ctx, &out, fmt.Sprintf(`SELECT t.id AS id, t.embedding AS embedding FROM tasks t
		WHERE t.project_id = ? AND t.embedding_model = ? AND t.embedding IS NOT NULL%s
		ORDER BY t.id LIMIT %d`, cond, limit), args...)
	return out, err
}

// LessonVectors reads up to limit vectors of model among the lessons lq
// selects (its terms, when given, must match; Rank is then the relevance),
// in id order after the id after ("" from the start). lq's paging is
// ignored.
func (q SessionQueries) LessonVectors(ctx context.Context, lq LessonQuery, model, after string, limit int) ([]StoredVector, error) {
	conds, args := lq.where("l")
	from, rank := "lessons l", "1.0"
	var margs []any
	switch {
	case len(lq.Terms) == 0:
	case q.db.dialect == Postgres:
		from, rank = "lessons l, to_tsquery('english', ?) tsq", "ts_rank(l.search_vector, tsq)"
		conds = append(conds, "l.search_vector @@ tsq")
		margs = []any{strings.Join(lq.Terms, " | ")}
	default:
		quoted := make([]string, len(lq.Terms))
		for i, t := range lq.Terms {
			quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
		}
		from, rank = "lessons_fts JOIN lessons l ON l.id = lessons_fts.id", "(-bm25(lessons_fts))"
		conds = append(conds, "lessons_fts MATCH ?")
		args = append(args, strings.Join(quoted, " OR "))
	}
	conds, args = append(conds, "l.embedding_model = ?", "l.embedding IS NOT NULL"), append(args, model)
	if after != "" {
		conds, args = append(conds, "l.id > ?"), append(args, after)
	}
	args = append(margs, args...)
	query, args := in(fmt.Sprintf(`SELECT l.id AS id, l.embedding AS embedding, l.confidence AS confidence, %s AS rank
		FROM %s WHERE %s ORDER BY l.id LIMIT %d`, rank, from, strings.Join(conds, " AND "), limit), args...)
	var out []StoredVector
	err := q.selectx(ctx, &out, query, args...)
	return out, err
}

// TaskVectorStamp changes whenever a project's task vectors of model change:
// their count and the newest change to one of them (every write of a task's
// vector moves its updated_at; tasks are never deleted). A cache of the
// vectors is fresh while its stamp is. One index-only read.
func (q TaskQueries) TaskVectorStamp(ctx context.Context, projectID, model string) (string, error) {
	var row struct {
		N      int `db:"n"`
		Latest any `db:"latest"`
	}
	err := q.get(ctx, &row, `SELECT COUNT(*) AS n, MAX(updated_at) AS latest FROM tasks
		WHERE project_id = ? AND embedding_model = ? AND embedding IS NOT NULL`, projectID, model)
	return fmt.Sprintf("%d %v", row.N, row.Latest), err
}
