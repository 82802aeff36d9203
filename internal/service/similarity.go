package service

import (
	"context"
	"math"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// vectorPage is how many stored vectors a similarity search reads per
// statement: 1,000 vectors of 768 float32 are 3 MB.
const vectorPage = 1000

// SimilarTasksArgs are the arguments of similarTasks.
type SimilarTasksArgs struct {
	ProjectID      string
	Embedding      []float64
	TaskID         *string
	EmbeddingModel string
	First          *int
	MinScore       *float64
}

// SimilarTasks ranks the project's tasks with an embedding of the model by
// cosine similarity to the vector given, or to the vector of the task
// TaskID (that task left out), highest first, ties by id. The project's
// vectors of the model are read in pages of vectorPage and scored in the
// server, keeping only the best first: one statement per page, memory for one
// page and the result.
func (s *Tasks) SimilarTasks(ctx context.Context, args SimilarTasksArgs) ([]*domain.TaskSimilarity, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	project, err := s.Projects.visibleProject(ctx, p, args.ProjectID, "projectId")
	if err != nil {
		return nil, err
	}
	first := 10
	if args.First != nil {
		first = *args.First
	}
	if first < 0 || first > domain.MaxSimilarResults {
		return nil, &domain.Error{Code: domain.CodeBadUserInput, Field: "first",
			Message: "first is between 0 and 100"}
	}
	if args.MinScore != nil && (math.IsNaN(*args.MinScore) || *args.MinScore < -1 || *args.MinScore > 1) {
		return nil, domain.InputError("minScore", "minScore is between -1 and 1")
	}
	model, err := domain.CheckText("embeddingModel", args.EmbeddingModel, domain.MaxEmbeddingModelLen, true)
	if err != nil {
		return nil, err
	}
	if (args.Embedding == nil) == (args.TaskID == nil) {
		return nil, domain.InputError("embedding", "give exactly one of embedding and taskId")
	}
	var query []float32
	skip := ""
	if args.TaskID != nil {
		t, _, err := s.visibleTask(ctx, p, *args.TaskID, "taskId")
		if err != nil {
			return nil, err
		}
		if t.ProjectID != project.ID {
			return nil, domain.InputError("taskId", "the task belongs to another project")
		}
		if len(t.Embedding) == 0 || t.EmbeddingModel == nil || *t.EmbeddingModel != model {
			return nil, domain.InputError("taskId", "the task has no embedding of model %q", domain.Echo(model))
		}
		query, skip = domain.DecodeVector(nil, t.Embedding), t.ID
	} else {
		if _, err := domain.CheckEmbedding("embedding", args.Embedding, "embeddingModel", &model); err != nil {
			return nil, err
		}
		want, known, err := s.db.Tasks.KnownDimension(ctx, project.ID, model)
		if err != nil {
			return nil, err
		}
		if known {
			if err := domain.CheckDimension("embedding", model, len(args.Embedding), want); err != nil {
				return nil, err
			}
		}
		query = domain.DecodeVector(nil, domain.EncodeEmbedding(args.Embedding))
	}
	if first == 0 {
		return []*domain.TaskSimilarity{}, nil
	}
	best, err := s.rankTaskVectors(ctx, project.ID, model, query, skip, first, args.MinScore)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(best))
	for i, b := range best {
		ids[i] = b.ID
	}
	tasks, err := s.db.Tasks.TasksByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*domain.Task, len(tasks))
	for _, t := range tasks {
		byID[t.ID] = t
		s.load(ctx).tasks.Prime(t.ID, t)
	}
	out := make([]*domain.TaskSimilarity, 0, len(best))
	for _, b := range best {
		if t := byID[b.ID]; t != nil { // deleted since its vector was read
			out = append(out, &domain.TaskSimilarity{Task: t, Score: b.Score})
		}
	}
	return out, nil
}

// rankTaskVectors keeps the n of the project's vectors of model closest to
// query (at least minScore), leaving out the task skip and vectors of another
// dimension. The vectors come from the cache when its stamp is the
// database's; else they are read page by page (and cached when they fit).
func (s *Tasks) rankTaskVectors(ctx context.Context, projectID, model string, query []float32, skip string, n int, minScore *float64) ([]domain.Scored, error) {
	norm := domain.Norm(query)
	top := domain.NewTopN(n)
	score := func(id string, vec []float32, vecNorm float64) {
		if id == skip || len(vec) != len(query) {
			return
		}
		sc := domain.CosineNormed(query, norm, vec, vecNorm)
		if minScore != nil && sc < *minScore {
			return
		}
		top.Add(domain.Scored{ID: id, Score: sc})
	}
	key := vectorKey{projectID, model}
	stamp, err := s.db.Tasks.TaskVectorStamp(ctx, projectID, model)
	if err != nil {
		return nil, err
	}
	if set := s.vectors.get(key, stamp); set != nil {
		for i, id := range set.ids {
			score(id, set.vecs[i], set.norms[i])
		}
		return top.Sorted(), nil
	}
	set := &vectorSet{key: key, stamp: stamp}
	after := ""
	for {
		rows, err := s.db.Tasks.TaskVectors(ctx, projectID, model, after, vectorPage)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if set != nil {
				set.add(r.ID, r.Embedding)
				i := len(set.ids) - 1
				score(r.ID, set.vecs[i], set.norms[i])
				if set.bytes > vectorCacheBytes {
					set = nil // too many to keep: scored as they come
				}
				continue
			}
			vec := domain.DecodeVector(nil, r.Embedding)
			score(r.ID, vec, domain.Norm(vec))
		}
		if len(rows) < vectorPage {
			break
		}
		after = rows[len(rows)-1].ID
	}
	// The vectors read are as of stamp or newer (read after it): a newer
	// set is only dropped at the next search, whose stamp differs.
	if set != nil {
		s.vectors.put(set)
	}
	return top.Sorted(), nil
}
