package sessions

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// vectorPage is how many stored vectors a similarity search reads per
// statement.
const vectorPage = 1000

// similarLessonPage is one page of the lessons lq selects that have an
// embedding of the model, ranked by cosine similarity to the vector ×
// confidence (× relevance when lq has terms: the lessons must match them),
// ties by id. The vectors are read in pages of vectorPage and scored in the
// server, keeping the best up to the page's end; its cursors are positions in
// the ranking. With oneProject (lq is one project's), a vector whose
// dimension is not the model's in that project is BAD_USER_INPUT.
func (s *Service) similarLessonPage(ctx context.Context, lq store.LessonQuery, oneProject bool, to domain.SimilarToInput,
	page domain.PageArgs) (domain.Page[*domain.Lesson], error) {
	var none domain.Page[*domain.Lesson]
	model, err := domain.CheckEmbedding("similarTo.embedding", to.Embedding, "similarTo.embeddingModel", &to.EmbeddingModel)
	if err != nil {
		return none, err
	}
	if oneProject {
		want, known, err := s.db.Tasks.KnownDimension(ctx, lq.ProjectIDs[0], model)
		if err != nil {
			return none, err
		}
		if known {
			if err := domain.CheckDimension("similarTo.embedding", model, len(to.Embedding), want); err != nil {
				return none, err
			}
		}
	}
	if err := page.Validate(); err != nil {
		return none, err
	}
	offset := 0
	if page.After != nil {
		off, err := store.ParseOffsetCursor(*page.After, "after")
		if err != nil {
			return none, err
		}
		offset = off + 1
	}
	limit := page.Limit()
	query := domain.DecodeVector(nil, domain.EncodeEmbedding(to.Embedding))
	norm := domain.Norm(query)
	top := domain.NewTopN(offset + limit + 1)
	total := 0
	var vec []float32
	for after := ""; ; {
		rows, err := s.db.Sessions.LessonVectors(ctx, lq, model, after, vectorPage)
		if err != nil {
			return none, err
		}
		for _, r := range rows {
			if len(r.Embedding) != 4*len(query) {
				continue
			}
			total++
			vec = domain.DecodeVector(vec, r.Embedding)
			top.Add(domain.Scored{ID: r.ID, Score: domain.Cosine(query, norm, vec) * r.Confidence * r.Rank})
		}
		if len(rows) < vectorPage {
			break
		}
		after = rows[len(rows)-1].ID
	}
	ranked := top.Sorted()
	pg := domain.Page[*domain.Lesson]{HasNextPage: len(ranked) > offset+limit, HasPreviousPage: offset > 0,
		Items: []*domain.Lesson{}, Cursors: []string{}}
	pg.Total = func(context.Context) (int, error) { return total, nil }
	if offset >= len(ranked) {
		return pg, nil
	}
	ranked = ranked[offset:min(len(ranked), offset+limit)]
	ids := make([]string, len(ranked))
	for i, r := range ranked {
		ids[i] = r.ID
	}
	found, err := s.db.Sessions.LessonsByIDs(ctx, ids)
	if err != nil {
		return none, err
	}
	byID := make(map[string]*domain.Lesson, len(found))
	for _, l := range found {
		byID[l.ID] = l
	}
	for i, id := range ids {
		if l := byID[id]; l != nil { // deleted since its vector was read
			pg.Items = append(pg.Items, l)
			pg.Cursors = append(pg.Cursors, store.OffsetCursor(offset+i))
			s.load(ctx).lessons.Prime(l.ID, l)
		}
	}
	return pg, nil
}
