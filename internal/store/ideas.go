package store

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// IdeaForUpdate loads an idea under a row lock.
func (q ProjectQueries) IdeaForUpdate(ctx context.Context, id string) (*domain.Idea, error) {
	var i domain.Idea
	if err := q.get(ctx, &i, `SELECT * FROM ideas WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &i, nil
}

// SetIdeaStage records an idea's new lifecycle stage.
func (q ProjectQueries) SetIdeaStage(ctx context.Context, id string, stage domain.IdeaStage, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE ideas SET lifecycle_stage = ?, updated_at = ? WHERE id = ?`, stage, at, id)
	return err
}
