package catalog

import (
	"context"
	"fmt"
	"io"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// ExamplesExport is a validated export of completed examples, ready to stream.
type ExamplesExport struct {
	s                *Service
	suiteID, modelID string
}

// ExportExamples prepares the export of every COMPLETED example's
// conversations, of one suite and one model when given ("" for any). Ids are
// global ids: malformed is BAD_USER_INPUT; unknown is NOT_FOUND.
func (s *Service) ExportExamples(ctx context.Context, suiteGID, modelGID string) (*ExamplesExport, error) {
	if _, err := app.Caller(ctx); err != nil {
		return nil, err
	}
	x := &ExamplesExport{s: s}
	c := s.cat(ctx)
	if suiteGID != "" {
		v, err := entity(ctx, c.suites, domain.KindSuite, suiteGID, "suite", "suite")
		if err != nil {
			return nil, err
		}
		x.suiteID = v.ID
	}
	if modelGID != "" {
		v, err := entity(ctx, c.models, domain.KindModel, modelGID, "model", "model")
		if err != nil {
			return nil, err
		}
		x.modelID = v.ID
	}
	return x, nil
}

// exportBatch is how many examples the export reads from the database at a time.
const exportBatch = 200

// WriteTo streams the conversations, one JSON object per line, oldest example
// first. The stored files are already clean JSONL, so they are copied as they are.
func (x *ExamplesExport) WriteTo(ctx context.Context, w io.Writer) (int64, error) {
	var (
		total int64
		last  *domain.Example
	)
	for {
		batch, err := x.s.db.Examples.CompletedExamplesAfter(ctx, x.suiteID, x.modelID, last, exportBatch)
		if err != nil {
			return total, err
		}
		for _, e := range batch {
			n, err := x.copyExample(e, w)
			total += n
			if err != nil {
				return total, err
			}
		}
		if len(batch) < exportBatch {
			return total, nil
		}
		last = batch[len(batch)-1]
	}
}

func (x *ExamplesExport) copyExample(e *domain.Example, w io.Writer) (int64, error) {
	f, err := x.s.files.Open(*e.StoragePath)
	if err != nil {
		return 0, fmt.Errorf("export example %s: %w", e.ID, err)
	}
	defer f.Close()
	return io.Copy(w, f)
}
