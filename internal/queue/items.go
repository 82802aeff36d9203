package queue

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// RegisterFunction registers a function (ADMIN only); registering a name
// again changes its maxAttempts and leaseSeconds for items enqueued later.
func (s *Service) RegisterFunction(ctx context.Context, in domain.RegisterQueueFunctionInput) (*domain.QueueFunction, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if !p.IsAdmin() {
		return nil, domain.Forbidden("only admins register queue functions")
	}
	name, err := domain.CheckText("name", in.Name, domain.MaxQueueFunctionName, true)
	if err != nil {
		return nil, err
	}
	f := &domain.QueueFunction{ID: app.NewID(), Name: name, MaxAttempts: domain.DefaultQueueMaxAttempts,
		LeaseSeconds: domain.DefaultQueueLeaseSeconds}
	if in.MaxAttempts != nil {
		if *in.MaxAttempts < 1 || *in.MaxAttempts > domain.MaxQueueAttempts {
			return nil, domain.InputError("maxAttempts", "maxAttempts must be between 1 and %d", domain.MaxQueueAttempts)
		}
		f.MaxAttempts = *in.MaxAttempts
	}
	if in.LeaseSeconds != nil {
		if *in.LeaseSeconds < 1 || *in.LeaseSeconds > domain.MaxQueueLeaseSeconds {
			return nil, domain.InputError("leaseSeconds", "leaseSeconds must be between 1 and %d", domain.MaxQueueLeaseSeconds)
		}
		f.LeaseSeconds = *in.LeaseSeconds
	}
	err = s.tx(ctx, func(tx *app.Tx) error {
		now, err := s.now(ctx, tx.Q)
		if err != nil {
			return err
		}
		f.CreatedAt, f.UpdatedAt = now, now
		f, err = tx.Queue.UpsertFunction(ctx, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Functions lists the registered functions by name.
func (s *Service) Functions(ctx context.Context) ([]*domain.QueueFunction, error) {
	if _, err := app.Caller(ctx); err != nil {
		return nil, err
	}
	fs, err := s.db.Queue.Functions(ctx)
	if fs == nil && err == nil {
		fs = []*domain.QueueFunction{}
	}
	return fs, err
}

// entityProject is the project of the planner or worker an item is for.
func entityProject(ctx context.Context, q *store.Q, typ domain.QueueEntityType, id string) (string, error) {
	if typ == domain.QueueEntityPlanner {
		ps, err := q.Routing.PlannersByIDs(ctx, []string{id})
		if err != nil || len(ps) == 0 {
			return "", err
		}
		return ps[0].ProjectID, nil
	}
	ws, err := q.Routing.WorkersByIDs(ctx, []string{id})
	if err != nil || len(ws) == 0 {
		return "", err
	}
	return ws[0].ProjectID, nil
}

// Enqueue adds an item for a planner or worker in a project the caller may
// change. With a uniqueKey that a PENDING or IN_PROGRESS item of the same
// project and function holds, that item is returned with deduplicated true
// and nothing is added.
func (s *Service) Enqueue(ctx context.Context, in domain.EnqueueFunctionInput) (*domain.QueueItem, bool, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, false, err
	}
	if !in.EntityType.Valid() {
		return nil, false, domain.InputError("entityType", "unknown entity type %q", in.EntityType)
	}
	kind := domain.KindPlanner
	if in.EntityType == domain.QueueEntityWorker {
		kind = domain.KindWorker
	}
	entityID, err := domain.DecodeID(kind, in.EntityID, "entityId")
	if err != nil {
		if domain.ErrorCode(err) == domain.CodeNotFound {
			return nil, false, domain.InputError("entityId", "entityId is not the id of a %s (entityType %s)", kind, in.EntityType)
		}
		return nil, false, err
	}
	name, err := domain.CheckText("functionName", in.FunctionName, domain.MaxQueueFunctionName, true)
	if err != nil {
		return nil, false, err
	}
	if err := domain.CheckJSONSize("payload", in.Payload); err != nil {
		return nil, false, err
	}
	it := &domain.QueueItem{ID: app.NewID(), EntityType: in.EntityType, EntityRowID: entityID, FunctionName: name,
		Payload: in.Payload, Status: domain.QueuePending, Errors: domain.QueueErrors{}}
	if len(it.Payload) == 0 || string(it.Payload) == "null" {
		it.Payload = domain.JSON(`{}`)
	}
	if in.Priority != nil {
		if *in.Priority < -domain.MaxQueuePriority || *in.Priority > domain.MaxQueuePriority {
			return nil, false, domain.InputError("priority", "priority must be between %d and %d", -domain.MaxQueuePriority, domain.MaxQueuePriority)
		}
		it.Priority = *in.Priority
	}
	if in.UniqueKey != nil {
		key, err := domain.CheckText("uniqueKey", *in.UniqueKey, domain.MaxUniqueKey, true)
		if err != nil {
			return nil, false, err
		}
		it.UniqueKey = &key
	}
	dedup := false
	err = s.tx(ctx, func(tx *app.Tx) error {
		fs, err := tx.Queue.FunctionsByNames(ctx, []string{name})
		if err != nil {
			return err
		}
		if len(fs) == 0 {
			return domain.InputError("functionName", "no queue function %q is registered", name)
		}
		projectID, err := entityProject(ctx, tx.Q, in.EntityType, entityID)
		if err != nil {
			return err
		}
		notFound := &domain.Error{Code: domain.CodeNotFound, Field: "entityId", Message: string(kind) + " not found"}
		if projectID == "" {
			return notFound
		}
		if ok, err := app.CanSeeProjectID(ctx, tx.Q, p, projectID); err != nil {
			return err
		} else if !ok {
			return notFound
		}
		now, err := s.now(ctx, tx.Q)
		if err != nil {
			return err
		}
		it.ProjectID, it.MaxAttempts, it.LeaseSeconds = projectID, fs[0].MaxAttempts, fs[0].LeaseSeconds
		it.CreatedAt, it.UpdatedAt, it.ScheduledAt = now, now, now
		if in.ScheduledAt != nil {
			it.ScheduledAt = in.ScheduledAt.UTC().Truncate(time.Microsecond)
		}
		inserted, err := tx.Queue.InsertItem(ctx, it)
		if err != nil {
			return err
		}
		if !inserted {
			// The key's holder committed before us (ON CONFLICT waited for it).
			held, err := tx.Queue.ActiveItemByKey(ctx, projectID, name, *it.UniqueKey, domain.QueueActiveStatuses)
			if errors.Is(err, store.ErrNotFound) {
				// It finished between the insert and this read: try again.
				return store.ErrRetry
			} else if err != nil {
				return err
			}
			it, dedup = held, true
			return nil
		}
		tx.Record(domain.NewQueueItemEnqueued(it))
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return it, dedup, nil
}

// Claim hands up to limit due PENDING items of functions to the caller,
// each to exactly one claimer: highest priority first, then oldest, each
// leased for its function's leaseSeconds, attempt + 1.
func (s *Service) Claim(ctx context.Context, in domain.ClaimQueueItemsInput) ([]*domain.QueueItem, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if len(in.FunctionNames) == 0 {
		return nil, domain.InputError("functionNames", "name at least one function")
	}
	if len(in.FunctionNames) > domain.MaxQueueFunctions {
		return nil, &domain.Error{Code: domain.CodeLimitExceeded, Field: "functionNames",
			Message: fmt.Sprintf("at most %d functions in one claim", domain.MaxQueueFunctions)}
	}
	names, err := domain.CheckList("functionNames", in.FunctionNames, domain.MaxQueueFunctions, domain.MaxQueueFunctionName)
	if err != nil {
		return nil, err
	}
	worker, err := domain.CheckText("workerName", in.WorkerName, domain.MaxName, true)
	if err != nil {
		return nil, err
	}
	limit := 1
	if in.Limit != nil {
		limit = *in.Limit
	}
	if limit < 1 {
		return nil, domain.InputError("limit", "limit must be at least 1")
	}
	if limit > domain.MaxQueueClaim {
		return nil, &domain.Error{Code: domain.CodeLimitExceeded, Field: "limit",
			Message: fmt.Sprintf("at most %d items in one claim", domain.MaxQueueClaim), Details: map[string]any{"max": domain.MaxQueueClaim}}
	}
	fs, err := s.db.Queue.FunctionsByNames(ctx, names)
	if err != nil {
		return nil, err
	}
	lease := map[string]int{}
	for _, f := range fs {
		lease[f.Name] = f.LeaseSeconds
	}
	for _, n := range names {
		if _, ok := lease[n]; !ok {
			return nil, domain.InputError("functionNames", "no queue function %q is registered", n)
		}
	}
	scope := app.ScopeOf(p)
	if p.Role == domain.RoleAgent && p.ProjectID == nil {
		return []*domain.QueueItem{}, nil
	}
	var out []*domain.QueueItem
	err = s.tx(ctx, func(tx *app.Tx) error {
		out = nil
		now, err := s.now(ctx, tx.Q)
		if err != nil {
			return err
		}
		items, err := tx.Queue.ClaimCandidates(ctx, names, scope, now, limit)
		if err != nil || len(items) == 0 {
			return err
		}
		// One statement per lease length (usually one).
		bySeconds := map[int][]string{}
		for _, it := range items {
			bySeconds[it.LeaseSeconds] = append(bySeconds[it.LeaseSeconds], it.ID)
		}
		secs := make([]int, 0, len(bySeconds))
		for n := range bySeconds {
			secs = append(secs, n)
		}
		sort.Ints(secs)
		for _, n := range secs {
			if err := tx.Queue.ClaimItems(ctx, bySeconds[n], worker, claimerID(p), now.Add(leaseDuration(n)), now); err != nil {
				return err
			}
		}
		for _, it := range items {
			until := now.Add(leaseDuration(it.LeaseSeconds))
			claimer := claimerID(p)
			it.Status, it.Attempt, it.ClaimedBy, it.ClaimerID = domain.QueueInProgress, it.Attempt+1, &worker, &claimer
			it.LeaseExpiresAt, it.UpdatedAt = &until, now
			tx.Record(domain.NewQueueItemClaimed(it, now))
		}
		out = items
		return nil
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []*domain.QueueItem{}
	}
	return out, nil
}

// held loads and locks an item the caller's current lease holds; anything
// else — another claimer's item, an earlier attempt (attempt given), an
// expired lease, an item no longer IN_PROGRESS (rescued, cancelled, done) —
// is LEASE_LOST, whose extensions say the item's status and attempt.
func (s *Service) held(ctx context.Context, tx *app.Tx, p *auth.Principal, gid string, attempt *int) (*domain.QueueItem, error) {
	id, err := domain.DecodeID(domain.KindQueueItem, gid, "id")
	if err != nil {
		return nil, err
	}
	it, err := tx.Queue.ItemForUpdate(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: "id", Message: "queue item not found"}
	} else if err != nil {
		return nil, err
	}
	if ok, err := app.CanSeeProjectID(ctx, tx.Q, p, it.ProjectID); err != nil {
		return nil, err
	} else if !ok {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: "id", Message: "queue item not found"}
	}
	now, err := s.now(ctx, tx.Q)
	if err != nil {
		return nil, err
	}
	lost := func(why string) error {
		return &domain.Error{Code: domain.CodeLeaseLost, Message: "the lease on this queue item is lost: " + why,
			Details: map[string]any{"status": string(it.Status), "attempt": it.Attempt}}
	}
	switch {
	case it.Status != domain.QueueInProgress:
		return nil, lost(fmt.Sprintf("the item is %s", it.Status))
	case it.ClaimerID == nil || *it.ClaimerID != claimerID(p):
		return nil, lost("another claimer holds it")
	case attempt != nil && *attempt != it.Attempt:
		return nil, lost(fmt.Sprintf("attempt %d is over; the item is on attempt %d", *attempt, it.Attempt))
	case it.LeaseExpiresAt == nil || !it.LeaseExpiresAt.After(now):
		return nil, lost("it expired")
	}
	it.UpdatedAt = now
	return it, nil
}

func leaseDuration(seconds int) time.Duration { return time.Duration(seconds) * time.Second }

// Extend renews the caller's lease on an item for its leaseSeconds from now.
func (s *Service) Extend(ctx context.Context, in domain.ExtendQueueLeaseInput) (*domain.QueueItem, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	var it *domain.QueueItem
	err = s.tx(ctx, func(tx *app.Tx) error {
		if it, err = s.held(ctx, tx, p, in.ID, in.Attempt); err != nil {
			return err
		}
		until := it.UpdatedAt.Add(leaseDuration(it.LeaseSeconds))
		it.LeaseExpiresAt = &until
		return tx.Queue.ExtendLease(ctx, it.ID, until, it.UpdatedAt)
	})
	if err != nil {
		return nil, err
	}
	return it, nil
}

// Complete ends the caller's attempt with success: COMPLETED, with result.
func (s *Service) Complete(ctx context.Context, in domain.CompleteQueueItemInput) (*domain.QueueItem, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := domain.CheckJSONSize("result", in.Result); err != nil {
		return nil, err
	}
	var it *domain.QueueItem
	err = s.tx(ctx, func(tx *app.Tx) error {
		if it, err = s.held(ctx, tx, p, in.ID, in.Attempt); err != nil {
			return err
		}
		now := it.UpdatedAt
		it.Status, it.Result, it.LeaseExpiresAt, it.ClaimerID, it.FinishedAt = domain.QueueCompleted, in.Result, nil, nil, &now
		if string(it.Result) == "null" {
			it.Result = nil
		}
		if err := tx.Queue.UpdateItem(ctx, it); err != nil {
			return err
		}
		tx.Record(domain.NewQueueItemCompleted(it, now))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return it, nil
}

// Fail ends the caller's attempt with an error, kept in the item's errors: a
// retryable failure below maxAttempts goes back to PENDING, due in attempt⁴
// seconds; anything else is FAILED.
func (s *Service) Fail(ctx context.Context, in domain.FailQueueItemInput) (*domain.QueueItem, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	msg, err := domain.CheckText("error", in.Error, domain.MaxQueueError, true)
	if err != nil {
		return nil, err
	}
	retry := in.Retryable == nil || *in.Retryable
	var it *domain.QueueItem
	err = s.tx(ctx, func(tx *app.Tx) error {
		if it, err = s.held(ctx, tx, p, in.ID, in.Attempt); err != nil {
			return err
		}
		now := it.UpdatedAt
		will := it.Fail(msg, retry, now)
		if err := tx.Queue.UpdateItem(ctx, it); err != nil {
			return err
		}
		tx.Record(domain.NewQueueItemFailed(it, will, now))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return it, nil
}

// Cancel cancels a PENDING or IN_PROGRESS item of a project the caller may
// change; a running item's claimer learns it at its next call (LEASE_LOST
// with status CANCELLED). A final item is INVALID_TRANSITION.
func (s *Service) Cancel(ctx context.Context, in domain.CancelQueueItemInput) (*domain.QueueItem, error) {
	p, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	id, err := domain.DecodeID(domain.KindQueueItem, in.ID, "id")
	if err != nil {
		return nil, err
	}
	var it *domain.QueueItem
	err = s.tx(ctx, func(tx *app.Tx) error {
		it, err = tx.Queue.ItemForUpdate(ctx, id)
		notFound := &domain.Error{Code: domain.CodeNotFound, Field: "id", Message: "queue item not found"}
		if errors.Is(err, store.ErrNotFound) {
			return notFound
		} else if err != nil {
			return err
		}
		if ok, err := app.CanSeeProjectID(ctx, tx.Q, p, it.ProjectID); err != nil {
			return err
		} else if !ok {
			return notFound
		}
		if it.Status.Final() {
			return &domain.Error{Code: domain.CodeInvalidTransition,
				Message: fmt.Sprintf("the queue item is %s, which is final", it.Status),
				Details: map[string]any{"from": string(it.Status), "to": string(domain.QueueCancelled)}}
		}
		now, err := s.now(ctx, tx.Q)
		if err != nil {
			return err
		}
		from := it.Status
		it.Status, it.LeaseExpiresAt, it.ClaimerID, it.FinishedAt, it.UpdatedAt = domain.QueueCancelled, nil, nil, &now, now
		if err := tx.Queue.UpdateItem(ctx, it); err != nil {
			return err
		}
		tx.Record(domain.NewQueueItemCancelled(it, from, now))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return it, nil
}
