package service

import (
	"context"
	"sync"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// maxKnownDimensions bounds the dimensions kept: one per project and model;
// past it the cache starts again empty.
const maxKnownDimensions = 10_000

// dimensionCache keeps the dimension of each model's task vectors in each
// project, as committed in embedding_models. That row is written by the
// model's first vector in the project and never changed or removed, so a
// dimension once committed holds for good, on every replica: a create or an
// update with a vector then checks it without a statement (on PostgreSQL a
// round trip). Only a committed dimension is kept (AfterCommit): one read or
// written by a transaction that rolls back may never exist.
type dimensionCache struct {
	mu   sync.RWMutex
	dims map[vectorKey]int
}

func (c *dimensionCache) get(key vectorKey) (int, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	d, ok := c.dims[key]
	return d, ok
}

func (c *dimensionCache) put(key vectorKey, dims int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dims == nil || len(c.dims) >= maxKnownDimensions {
		c.dims = map[vectorKey]int{}
	}
	c.dims[key] = dims
}

// checkTaskDimension refuses t's vector unless it has the dimension its model
// has in t's project (set by the model's first vector there).
func (s *Service) checkTaskDimension(ctx context.Context, tx *app.Tx, t *domain.Task) error {
	if t.Embedding == nil || t.EmbeddingModel == nil {
		return nil
	}
	dims := len(t.Embedding) / 4
	key := vectorKey{project: t.ProjectID, model: *t.EmbeddingModel}
	want, known := s.dims.get(key)
	if !known {
		var err error
		if want, err = tx.Tasks.EmbeddingDimension(ctx, t.ProjectID, *t.EmbeddingModel, dims); err != nil {
			return err
		}
		tx.AfterCommit(func() { s.dims.put(key, want) })
	}
	return domain.CheckDimension("embedding", *t.EmbeddingModel, dims, want)
}
