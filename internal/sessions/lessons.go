package sessions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"strings"
	"unicode"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/store"
)

// RecordLesson is RecordLessonResult without whether it was a known lesson.
func (s *Service) RecordLesson(ctx context.Context, in domain.RecordLessonInput) (*domain.Lesson, error) {
	l, _, err := s.RecordLessonResult(ctx, in)
	return l, err
}

// RecordLessonResult records a lesson: in projectId's project, or in the
// session's (sessionId), or — neither given — globally, seen by everyone (an
// AGENT token's lesson without either goes to its own project; any other
// caller but an admin is refused, FORBIDDEN). The same lesson (scope, tool,
// context and lesson) is stored once: recording it again reinforces the first
// — its confidence raised to the higher of the two, its reinforcements
// counted up, its embedding replaced when one is given — and reports
// deduplicated.
func (s *Service) RecordLessonResult(ctx context.Context, in domain.RecordLessonInput) (*domain.Lesson, bool, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, false, err
	}
	l := &domain.Lesson{ID: app.NewID(), Confidence: in.Confidence}
	if l.Context, err = domain.CheckText("context", in.Context, domain.MaxLessonTextLen, true); err != nil {
		return nil, false, err
	}
	if l.WhatWorked, err = domain.CheckText("whatWorked", in.WhatWorked, domain.MaxLessonTextLen, true); err != nil {
		return nil, false, err
	}
	if l.Lesson, err = domain.CheckText("lesson", in.Lesson, domain.MaxLessonTextLen, true); err != nil {
		return nil, false, err
	}
	if in.WhatFailed != nil {
		v, err := domain.CheckText("whatFailed", *in.WhatFailed, domain.MaxLessonTextLen, false)
		if err != nil {
			return nil, false, err
		}
		if v != "" {
			l.WhatFailed = &v
		}
	}
	if in.ToolName != nil {
		v, err := domain.CheckText("toolName", *in.ToolName, domain.MaxToolNameLen, false)
		if err != nil {
			return nil, false, err
		}
		if v != "" {
			l.ToolName = &v
		}
	}
	if in.Embedding != nil {
		model, err := domain.CheckEmbedding("embedding", in.Embedding, "embeddingModel", in.EmbeddingModel)
		if err != nil {
			return nil, false, err
		}
		l.Embedding, l.EmbeddingModel = domain.EncodeEmbedding(in.Embedding), &model
	} else if in.EmbeddingModel != nil {
		return nil, false, domain.InputError("embeddingModel", "embeddingModel goes with an embedding")
	}
	if math.IsNaN(in.Confidence) || in.Confidence < 0 || in.Confidence > 1 {
		return nil, false, domain.InputError("confidence", "confidence must be between 0 and 1")
	}
	if in.ProjectID != nil {
		project, err := s.visibleProject(ctx, p, *in.ProjectID, "projectId")
		if err != nil {
			return nil, false, err
		}
		l.ProjectID = &project.ID
	}
	var sessionID *string
	if in.SessionID != nil {
		id, err := domain.DecodeID(domain.KindAgentSession, *in.SessionID, "sessionId")
		if err != nil {
			return nil, false, fieldNotFound(err, "sessionId")
		}
		sessionID = &id
	}
	if l.ProjectID == nil && sessionID == nil && p.Role == domain.RoleAgent && p.ProjectID != nil {
		pid := *p.ProjectID
		l.ProjectID = &pid
	}
	// A global lesson is ranked into every tenant's relevantLessons: like
	// global rules and templates, only an admin writes one.
	if l.ProjectID == nil && sessionID == nil && p.Role != domain.RoleAdmin {
		return nil, false, domain.Forbidden("only an admin may record global lessons: give projectId or sessionId")
	}
	deduplicated := false
	err = s.tx(ctx, func(tx *app.Tx) error {
		var sess *domain.AgentSession
		if sessionID != nil {
			found, err := tx.Sessions.SessionsByIDs(ctx, []string{*sessionID})
			if err != nil {
				return err
			}
			ok := len(found) == 1
			if ok {
				if ok, err = app.CanSeeProjectID(ctx, tx.Q, p, found[0].ProjectID); err != nil {
					return err
				}
			}
			if !ok {
				return &domain.Error{Code: domain.CodeNotFound, Field: "sessionId", Message: "agent session not found"}
			}
			sess = found[0]
			if err := writable(ctx, tx, p, sess, "sessionId"); err != nil {
				return err
			}
			switch {
			case l.ProjectID == nil:
				l.ProjectID = &sess.ProjectID
			case *l.ProjectID != sess.ProjectID:
				return domain.InputError("sessionId", "the session belongs to another project")
			}
			l.SessionID = &sess.ID
		}
		l.DedupeKey = lessonKey(l)
		l.CreatedAt = s.now()
		if l.EmbeddingModel != nil {
			if err := checkLessonDimension(ctx, tx, l); err != nil {
				return err
			}
		}
		stored, inserted, err := tx.Sessions.UpsertLesson(ctx, l)
		if err != nil {
			return err
		}
		l, deduplicated = stored, !inserted
		if !inserted {
			// Known already: reinforced, not stored (nor announced) twice.
			return nil
		}
		if ev := domain.NewLessonRecorded(l, sess, l.CreatedAt); ev != nil {
			tx.Record(ev)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return l, deduplicated, nil
}

// checkLessonDimension refuses l's vector unless it has the dimension its
// model has in l's project (the global lessons are a scope of their own).
func checkLessonDimension(ctx context.Context, tx *app.Tx, l *domain.Lesson) error {
	scope := ""
	if l.ProjectID != nil {
		scope = *l.ProjectID
	}
	dims := len(l.Embedding) / 4
	want, err := tx.Tasks.EmbeddingDimension(ctx, scope, *l.EmbeddingModel, dims)
	if err != nil {
		return err
	}
	return domain.CheckDimension("embedding", *l.EmbeddingModel, dims, want)
}

// lessonKey identifies a lesson by its scope (project or global), tool,
// context and lesson (case and spacing aside): the same lesson recorded twice
// is stored once. What worked and failed are the first record's.
func lessonKey(l *domain.Lesson) string {
	norm := func(s *string) string {
		if s == nil {
			return ""
		}
		return strings.Join(strings.Fields(strings.ToLower(*s)), " ")
	}
	b, _ := json.Marshal([]string{"v2", norm(l.ProjectID), norm(l.ToolName), norm(&l.Context), norm(&l.Lesson)})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// LessonsArgs are the arguments of the lessons query.
type LessonsArgs struct {
	ProjectID     *string
	Query         *string
	ToolName      *string
	MinConfidence *float64
	SimilarTo     *domain.SimilarToInput
	First         *int
	After         *string
}

// Lessons lists the lessons the caller may see — of one project with
// projectId, else the global ones and those of every visible project. With
// query, those matching it (full-text) rank by relevance × confidence, ties
// by newest; without, by confidence. minConfidence filters.
func (s *Service) Lessons(ctx context.Context, args LessonsArgs) (domain.Page[*domain.Lesson], error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return domain.Page[*domain.Lesson]{}, err
	}
	var lq store.LessonQuery
	if args.ProjectID != nil {
		project, err := s.visibleProject(ctx, p, *args.ProjectID, "projectId")
		if err != nil {
			return domain.Page[*domain.Lesson]{}, err
		}
		lq.ProjectIDs = []string{project.ID}
	} else {
		lq = scopeLessons(p)
	}
	if args.Query != nil {
		if len(*args.Query) > domain.MaxLessonQuery {
			return domain.Page[*domain.Lesson]{}, &domain.Error{Code: domain.CodeLimitExceeded, Field: "query",
				Message: "a query is at most 1000 bytes"}
		}
		lq.Terms = domain.SearchTerms(*args.Query)
		if len(lq.Terms) == 0 && strings.IndexFunc(*args.Query, isWordRune) >= 0 {
			// Words, but stopwords only: nothing matches, on either database.
			return domain.Page[*domain.Lesson]{Items: []*domain.Lesson{}, Cursors: []string{},
				Total: func(context.Context) (int, error) { return 0, nil }}, nil
		}
	}
	if args.ToolName != nil {
		lq.ToolName = args.ToolName
	}
	if c := args.MinConfidence; c != nil {
		if math.IsNaN(*c) {
			return domain.Page[*domain.Lesson]{}, domain.InputError("minConfidence", "not a number")
		}
		lq.MinConfidence = c
	}
	if args.SimilarTo != nil {
		return s.similarLessonPage(ctx, lq, args.ProjectID != nil, *args.SimilarTo, domain.PageArgs{First: args.First, After: args.After})
	}
	return s.lessonPage(ctx, lq, domain.PageArgs{First: args.First, After: args.After})
}

// isWordRune reports whether r belongs to a word of a search query.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// scopeLessons is what lessons p may see: the global ones and those of the
// projects it sees.
func scopeLessons(p *auth.Principal) store.LessonQuery {
	switch p.Role {
	case domain.RoleAdmin:
		return store.LessonQuery{All: true}
	case domain.RoleAgent:
		lq := store.LessonQuery{Global: true}
		if p.ProjectID != nil {
			lq.ProjectIDs = []string{*p.ProjectID}
		}
		return lq
	default:
		return store.LessonQuery{Global: true, OwnerID: p.UserID}
	}
}

// lessonPage reads one page of a ranked lesson list; its cursors are
// positions in the ranking.
func (s *Service) lessonPage(ctx context.Context, lq store.LessonQuery, page domain.PageArgs) (domain.Page[*domain.Lesson], error) {
	if err := page.Validate(); err != nil {
		return domain.Page[*domain.Lesson]{}, err
	}
	if page.After != nil {
		off, err := store.ParseOffsetCursor(*page.After, "after")
		if err != nil {
			return domain.Page[*domain.Lesson]{}, err
		}
		lq.Offset = off + 1
	}
	limit := page.Limit()
	lq.Limit = limit + 1
	rows, err := s.db.Sessions.SearchLessons(ctx, lq)
	if err != nil {
		return domain.Page[*domain.Lesson]{}, err
	}
	pg := domain.Page[*domain.Lesson]{HasNextPage: len(rows) > limit, HasPreviousPage: lq.Offset > 0}
	if len(rows) > limit {
		rows = rows[:limit]
	}
	pg.Items = rows
	pg.Cursors = make([]string, len(rows))
	for i := range rows {
		pg.Cursors[i] = store.OffsetCursor(lq.Offset + i)
	}
	countQuery := lq
	pg.Total = func(ctx context.Context) (int, error) { return s.db.Sessions.CountLessons(ctx, countQuery) }
	for _, l := range rows {
		s.load(ctx).lessons.Prime(l.ID, l)
	}
	return pg, nil
}

// relevantKey is one Task.relevantLessons read: the task's project, the text
// it is ranked against, and how many lessons.
type relevantKey struct {
	projectID, text string
	n               int
}

// RelevantLessons ranks the lessons of a task's project and the global ones
// against the task's title, description and file names: the first of them.
// The task was shown by its parent field, so its project is visible. The
// reads of a request's tasks are batched into one statement.
func (s *Service) RelevantLessons(ctx context.Context, t *domain.Task, first *int) ([]*domain.Lesson, error) {
	n := 5
	if first != nil {
		n = *first
	}
	if err := (domain.PageArgs{First: &n}).Validate(); err != nil {
		return nil, err
	}
	if n == 0 {
		return []*domain.Lesson{}, nil
	}
	key := relevantKey{projectID: t.ProjectID, text: t.Title + " " + strings.Join(t.AffectedFiles, " ") + " " + t.Description, n: n}
	ld := app.Set(ctx, relevantLoaderKey{}, func(w loader.Timing) *loader.Loader[relevantKey, []*domain.Lesson] {
		return loader.New(w, func(ctx context.Context, keys []relevantKey) (map[relevantKey][]*domain.Lesson, error) {
			lqs := make([]store.LessonQuery, len(keys))
			for i, k := range keys {
				lqs[i] = store.LessonQuery{ProjectIDs: []string{k.projectID}, Global: true, Terms: domain.SearchTerms(k.text), Limit: k.n}
			}
			found, err := s.db.Sessions.SearchLessonsBatch(ctx, lqs)
			if err != nil {
				return nil, err
			}
			out := make(map[relevantKey][]*domain.Lesson, len(keys))
			for i, k := range keys {
				out[k] = found[i]
			}
			return out, nil
		})
	})
	out, err := ld.Load(ctx, key)
	if out == nil && err == nil {
		out = []*domain.Lesson{}
	}
	return out, err
}

type relevantLoaderKey struct{}
