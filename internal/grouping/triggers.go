package grouping

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/grouping/cluster"
	"github.com/taskgraph/taskgraph/internal/store"
)

// RunBackground makes suggestions after commits, expires old suggestions and
// terminates silent task agents, until ctx ends. Every replica runs it.
//
// Triggers are read from the database, not from the process that committed
// them: a project's TASK_CREATED events (the core records them with the
// task), its new DEPENDS_ON/BLOCKS links and the removal of links it has seen. A project's grouping cursor
// says how far they were handled; a replica takes the cursor row FOR UPDATE
// SKIP LOCKED (SQLite: its single writer), clusters, writes the suggestions
// and advances the cursor in one transaction, so each trigger is handled
// exactly once across replicas and a crash loses none.
//
// A project's clustering costs more the more candidates it has (every pair
// is scored: about a second for 2,000 on a busy core), and a project that
// keeps receiving tasks has new triggers at every poll. So after a project's
// triggers took d to handle, the project rests groupingRest × d before its
// next: the background grouping of a busy project takes at most a fifth of
// the time (of a core), and handles more triggers per clustering, where
// clustering it at every poll took a whole core from the requests. A small
// project's rest is a few milliseconds.
func (s *Service) RunBackground(ctx context.Context) {
	t := time.NewTicker(s.opts.PollInterval)
	defer t.Stop()
	sweepEvery := max(1, int((s.opts.HeartbeatInterval/2)/s.opts.PollInterval))
	rest := map[string]time.Time{} // project → when its rest ends
	for i := 0; ; i++ {
		if _, err := s.handleTriggers(ctx, rest); err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "background grouping failed", "err", err)
		}
		if i%sweepEvery == 0 {
			if _, err := s.ExpireSuggestions(ctx); err != nil && ctx.Err() == nil {
				s.log.ErrorContext(ctx, "suggestion expiry failed", "err", err)
			}
			if _, err := s.SweepTaskAgents(ctx); err != nil && ctx.Err() == nil {
				s.log.ErrorContext(ctx, "task agent sweep failed", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// HandleTriggers handles the pending triggers of every project that has some
// and returns how many suggestions it made.
func (s *Service) HandleTriggers(ctx context.Context) (int, error) {
	return s.handleTriggers(ctx, nil)
}

// groupingRest is how many times the duration of a project's handling the
// background grouping lets pass before it handles the project again.
const groupingRest = 4

// handleTriggers handles the pending triggers of every project that has some
// and is not resting (rest: project → end of its rest; nil: no rests).
func (s *Service) handleTriggers(ctx context.Context, rest map[string]time.Time) (int, error) {
	projects, err := s.db.ProjectsWithGroupingWork(ctx, 100)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, pid := range projects {
		if rest != nil && time.Now().Before(rest[pid]) {
			continue
		}
		start := time.Now()
		made, err := s.handleProject(ctx, pid)
		if err != nil {
			return n, err
		}
		n += made
		if rest != nil {
			rest[pid] = time.Now().Add(groupingRest * time.Since(start))
		}
	}
	now := time.Now()
	for pid, until := range rest {
		if now.After(until) {
			delete(rest, pid)
		}
	}
	return n, nil
}

// handleProject handles one project's triggers under its cursor.
func (s *Service) handleProject(ctx context.Context, projectID string) (int, error) {
	// The clustering runs here, on a snapshot read from the pool, off the
	// writer; the transaction re-reads its inputs (cheap: signatures, not
	// descriptions) and reuses it unless they changed in between.
	pre, err := s.clusterProject(ctx, &s.db.Q, projectID, domain.DefaultMinScore, nil)
	if err != nil {
		return 0, err
	}
	made := 0
	err = s.tx(ctx, func(tx *app.Tx) error {
		made = 0
		lastSeq, lastLinkAt, err := tx.Grouping.CursorForUpdate(ctx, projectID)
		if errors.Is(err, store.ErrNotFound) {
			return nil // another replica holds it
		} else if err != nil {
			return err
		}
		// suggestGroupings takes the same lock: one writer of a project's
		// suggestions at a time.
		if err := tx.Tasks.LockProjectGraph(ctx, projectID); err != nil {
			return err
		}
		evs, seq, err := tx.Grouping.EventsAfter(ctx, projectID, lastSeq, []domain.ExecutionEventType{domain.EventTaskCreated})
		if err != nil {
			return err
		}
		links, err := tx.Grouping.LinksCreatedAfter(ctx, projectID, lastLinkAt, dependencyTypes)
		if err != nil {
			return err
		}
		if err := tx.Grouping.SeeLinks(ctx, projectID, links); err != nil {
			return err
		}
		removed, err := tx.Grouping.TakeRemovedLinks(ctx, projectID)
		if err != nil {
			return err
		}
		linkAt := lastLinkAt
		if len(links) > 0 {
			at := links[len(links)-1].CreatedAt
			linkAt = &at
		}
		if len(evs) > 0 || len(links) > 0 || len(removed) > 0 {
			if made, err = s.handle(ctx, tx, projectID, pre, evs, links, removed); err != nil {
				return err
			}
		}
		return tx.Grouping.AdvanceCursor(ctx, projectID, seq, linkAt)
	})
	return made, err
}

// handle makes the suggestions of the triggers: groups (at the default
// minScore) that contain a newly created candidate (TASK_CREATED), both ends
// of a new dependency between candidates, or an end of a removed one
// (DEPENDENCY_CHANGED).
func (s *Service) handle(ctx context.Context, tx *app.Tx, projectID string, pre *clustering, evs []*domain.Event, links, removed []*domain.TaskRelationship) (int, error) {
	c, err := s.clusterProject(ctx, tx.Q, projectID, domain.DefaultMinScore, pre)
	if err != nil {
		return 0, err
	}
	candidates := c.candidates
	created := map[string]bool{}
	var createdOrder []string
	for _, e := range evs {
		if e.TaskID != nil && candidates[*e.TaskID] != nil && !created[*e.TaskID] {
			created[*e.TaskID] = true
			createdOrder = append(createdOrder, *e.TaskID)
		}
	}
	var linked [][2]string
	for _, r := range links {
		if candidates[r.SourceTaskID] != nil && candidates[r.TargetTaskID] != nil {
			linked = append(linked, [2]string{r.SourceTaskID, r.TargetTaskID})
		}
	}
	// A removed link leaves its ends in groups of their own making: groups
	// that hold either end.
	var unlinked [][2]string
	for _, r := range removed {
		if candidates[r.SourceTaskID] != nil && candidates[r.TargetTaskID] != nil {
			unlinked = append(unlinked, [2]string{r.SourceTaskID, r.TargetTaskID})
		}
	}
	if len(createdOrder) == 0 && len(linked) == 0 && len(unlinked) == 0 {
		return 0, nil
	}
	// One clustering; each group is attributed to the first trigger it
	// holds: new dependencies (the more specific reason) before new tasks.
	out, err := s.suggest(ctx, tx, c, projectID, nil, func(g cluster.Group) (domain.GroupingTrigger, *string, bool) {
		for _, l := range linked {
			if slices.Contains(g.Members, l[0]) && slices.Contains(g.Members, l[1]) {
				return domain.TriggerDependencyChanged, &l[0], true
			}
		}
		for _, l := range unlinked {
			for _, end := range l {
				if slices.Contains(g.Members, end) {
					return domain.TriggerDependencyChanged, &end, true
				}
			}
		}
		for _, id := range createdOrder {
			if slices.Contains(g.Members, id) {
				return domain.TriggerTaskCreated, &id, true
			}
		}
		return "", nil, false
	})
	return len(out), err
}
