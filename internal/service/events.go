package service

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/events"
	"github.com/taskgraph/taskgraph/internal/store"
)

// eventPosition reads a cursor given for project in field: the seq after which
// events are wanted. A cursor of another project is an input error.
func eventPosition(projectID, cursor, field string) (int64, error) {
	pid, seq, err := domain.ParseEventCursor(cursor, field)
	if err != nil {
		return 0, err
	}
	if pid != projectID {
		return 0, domain.InputError(field, "the cursor belongs to another project's events")
	}
	return seq, nil
}

// eventTypes normalises a types filter: nil or empty means every type.
func eventTypes(types []domain.ExecutionEventType) []domain.ExecutionEventType {
	if len(types) == 0 {
		return nil
	}
	out := slices.Clone(types)
	slices.Sort(out)
	return slices.Compact(out)
}

// ProjectEvents streams a project's events in commit order: those after the
// cursor after, or, without one, those committed from now on; only the given
// types when types is not empty. onEnd receives the error that ends a stream
// early (a subscriber too slow, the database failing), which names the
// cursor to resubscribe from; then the channel closes. It also closes when
// ctx ends.
func (s *Events) ProjectEvents(ctx context.Context, projectGID string, after *string, types []domain.ExecutionEventType,
	onEnd func(error),
) (<-chan domain.ExecutionEvent, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	// The check reads through loaders of its own: the subscription's context
	// lives as long as it does, and need not keep them.
	project, err := s.Projects.visibleProject(app.WithoutLoaders(ctx), p, projectGID, "projectId")
	if err != nil {
		return nil, err
	}
	from := int64(-1)
	if after != nil {
		if from, err = eventPosition(project.ID, *after, "after"); err != nil {
			return nil, err
		}
	}
	if s.events == nil {
		return nil, errors.New("service: no event broker configured")
	}
	log := s.logger(ctx)
	return s.events.Subscribe(ctx, project.ID, from, eventTypes(types), func(err error) {
		if onEnd != nil {
			onEnd(streamEndError(log, err))
		}
	})
}

// ProjectStreamHead checks that the caller may stream the project's events
// and returns where its stream stands now: the seq and cursor of the newest
// committed event. A subscriber that joins a stream already running (a
// shared subscription, internal/server) is handed only the events after it,
// as ProjectEvents without after would hand it.
func (s *Events) ProjectStreamHead(ctx context.Context, projectGID string) (int64, string, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return 0, "", err
	}
	project, err := s.Projects.visibleProject(app.WithoutLoaders(ctx), p, projectGID, "projectId")
	if err != nil {
		return 0, "", err
	}
	last, err := s.db.Events.LastEventSeqs(ctx, []string{project.ID})
	if err != nil {
		return 0, "", err
	}
	seq := last[project.ID]
	return seq, domain.EventCursor(project.ID, seq), nil
}

// streamEndError is what a subscriber is told when its stream ends early.
func streamEndError(log *slog.Logger, err error) error {
	var lag *events.LagError
	if errors.As(err, &lag) {
		return &domain.Error{Code: domain.CodeLimitExceeded, Message: lag.Error(),
			Details: map[string]any{"cursor": lag.Cursor, "reason": "SUBSCRIBER_TOO_SLOW"}}
	}
	var se *events.StreamError
	if errors.As(err, &se) {
		if domain.ErrorCode(se.Err) == domain.CodeUnavailable {
			log.Warn("event stream interrupted: database unavailable", slog.Any("err", se.Err))
			return &domain.Error{Code: domain.CodeUnavailable,
				Message: "the event stream was interrupted: the database is unavailable; resubscribe with after: \"" + se.Cursor + "\" in a moment to continue",
				Details: map[string]any{"cursor": se.Cursor}}
		}
		log.Error("event stream interrupted", slog.Any("err", se.Err))
		return &domain.Error{Code: domain.CodeInternal,
			Message: "the event stream was interrupted; resubscribe with after: \"" + se.Cursor + "\" to continue",
			Details: map[string]any{"cursor": se.Cursor}}
	}
	log.Error("event stream ended", slog.Any("err", err))
	return &domain.Error{Code: domain.CodeInternal, Message: "the event stream was interrupted"}
}

// eventPageArgs are the arguments of an events connection.
type eventPageArgs struct {
	Types []domain.ExecutionEventType
	Page  domain.PageArgs
}

// EventsOfProject pages a project's events, oldest first (batched across
// projects); the cursors are those of subscriptions.
func (s *Events) EventsOfProject(ctx context.Context, projectID string, types []domain.ExecutionEventType, page domain.PageArgs) (domain.Page[domain.ExecutionEvent], error) {
	return s.eventsPage(ctx, "Project.events", projectID, projectID, false, types, page)
}

// EventsOfRun pages a run's events, oldest first (batched across runs).
func (s *Events) EventsOfRun(ctx context.Context, run *domain.ExecutionRun, types []domain.ExecutionEventType, page domain.PageArgs) (domain.Page[domain.ExecutionEvent], error) {
	return s.eventsPage(ctx, "ExecutionRun.events", run.ProjectID, run.ID, true, types, page)
}

// eventsPage pages the events of parent: a project, or a run of projectID.
func (s *Events) eventsPage(ctx context.Context, field, projectID, parent string, byRun bool, types []domain.ExecutionEventType, page domain.PageArgs) (domain.Page[domain.ExecutionEvent], error) {
	for _, c := range []struct {
		cursor *string
		field  string
	}{{page.After, "after"}, {page.Before, "before"}} {
		if c.cursor != nil {
			if _, err := eventPosition(projectID, *c.cursor, c.field); err != nil {
				return domain.Page[domain.ExecutionEvent]{}, err
			}
		}
	}
	args := eventPageArgs{Types: eventTypes(types), Page: page}
	query := func(parents []string) store.EventQuery {
		if byRun {
			return store.EventQuery{RunIDs: parents, Types: args.Types, Page: page}
		}
		return store.EventQuery{ProjectIDs: parents, Types: args.Types, Page: page}
	}
	pg, err := app.NestedPage(ctx, s.db, field, args, parent,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.Event], error) {
			return q.Events.EventsByProjects(ctx, query(parents))
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Events.CountEventsByProjects(ctx, query(parents))
		})
	if err != nil {
		return domain.Page[domain.ExecutionEvent]{}, err
	}
	out := domain.Page[domain.ExecutionEvent]{HasNextPage: pg.HasNextPage, HasPreviousPage: pg.HasPreviousPage,
		Total: pg.Total, Items: make([]domain.ExecutionEvent, 0, len(pg.Items)), Cursors: make([]string, 0, len(pg.Items))}
	for i, e := range pg.Items {
		ev, err := domain.DecodeEvent(e)
		if err != nil {
			s.logger(ctx).Warn("skipping an event this version cannot decode", slog.Any("err", err))
			continue
		}
		out.Items = append(out.Items, ev)
		out.Cursors = append(out.Cursors, pg.Cursors[i])
	}
	return out, nil
}

// RunEvents streams a run's events in commit order: with after omitted, from
// the run's first event, then live; with a cursor, every event of the run
// after it. The stream is the project's, filtered to the run.
func (s *Events) RunEvents(ctx context.Context, runGID string, after *string, types []domain.ExecutionEventType,
	onEnd func(error),
) (<-chan domain.ExecutionEvent, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	run, err := s.Runs.visibleRun(app.WithoutLoaders(ctx), p, runGID, "runId")
	if err != nil {
		return nil, err
	}
	var from int64
	if after != nil {
		if from, err = eventPosition(run.ProjectID, *after, "after"); err != nil {
			return nil, err
		}
	} else {
		first, err := s.db.Events.FirstRunEventSeq(ctx, run.ProjectID, run.ID)
		if err != nil {
			return nil, err
		}
		from = max(first-1, 0)
	}
	if s.events == nil {
		return nil, errors.New("service: no event broker configured")
	}
	log := s.logger(ctx)
	inner, err := s.events.Subscribe(ctx, run.ProjectID, from, eventTypes(types), func(err error) {
		if onEnd != nil {
			onEnd(streamEndError(log, err))
		}
	})
	if err != nil {
		return nil, err
	}
	out := make(chan domain.ExecutionEvent)
	go func() {
		defer close(out)
		for ev := range inner {
			if r := ev.Record().RunID; r == nil || *r != run.ID {
				continue
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// EventCursorOfProject is the cursor of a project's newest event (of its
// start, when it has none): subscribing with it as after misses nothing that
// commits later.
func (s *Events) EventCursorOfProject(ctx context.Context, projectID string) (string, error) {
	seq, err := s.load(ctx).lastEventSeq.Load(ctx, projectID)
	if err != nil {
		return "", err
	}
	return domain.EventCursor(projectID, seq), nil
}
