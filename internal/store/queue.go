package store

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

const queueItemColumns = `id, project_id, entity_type, entity_id, function_name, payload, status, priority, unique_key,
	attempt, max_attempts, lease_seconds, scheduled_at, error_message, errors, result, claimed_by, claimer_id,
	lease_expires_at, finished_at, created_at, updated_at`

// UpsertFunction registers a queue function, or updates the settings of the
// one of that name, and returns the stored row.
func (q QueueQueries) UpsertFunction(ctx context.Context, f *domain.QueueFunction) (*domain.QueueFunction, error) {
	if _, err := q.namedExec(ctx, `INSERT INTO queue_functions (id, name, max_attempts, lease_seconds, created_at, updated_at)
		VALUES (:id, :name, :max_attempts, :lease_seconds, :created_at, :updated_at)
		ON CONFLICT (name) DO UPDATE SET max_attempts = excluded.max_attempts,
			lease_seconds = excluded.lease_seconds, updated_at = excluded.updated_at`, f); err != nil {
		return nil, err
	}
	var out domain.QueueFunction
	if err := q.get(ctx, &out, `SELECT * FROM queue_functions WHERE name = ?`, f.Name); err != nil {
		return nil, err
	}
	return &out, nil
}

// FunctionsByNames loads queue functions by name.
func (q QueueQueries) FunctionsByNames(ctx context.Context, names []string) ([]*domain.QueueFunction, error) {
	return byColumn[domain.QueueFunction](ctx, q.Q, "queue_functions", "name", names, "name")
}

// FunctionsByIDs loads queue functions by id.
func (q QueueQueries) FunctionsByIDs(ctx context.Context, ids []string) ([]*domain.QueueFunction, error) {
	return byIDs[domain.QueueFunction](ctx, q.Q, "queue_functions", ids)
}

// Functions lists every registered function by name.
func (q QueueQueries) Functions(ctx context.Context) ([]*domain.QueueFunction, error) {
	var out []*domain.QueueFunction
	err := q.selectx(ctx, &out, `SELECT * FROM queue_functions ORDER BY name`)
	return out, err
}

// InsertItem inserts a queue item. An item with a unique key that a PENDING
// or IN_PROGRESS item of the same project and function holds is not
// inserted: inserted is false then (the caller reads the holder).
func (q QueueQueries) InsertItem(ctx context.Context, it *domain.QueueItem) (inserted bool, err error) {
	query := `INSERT INTO queue_items (` + queueItemColumns + `) VALUES (` + namedList(queueItemColumns) + `)`
	if it.UniqueKey != nil {
		// The arbiter is the partial unique index queue_items_unique_key.
		query += ` ON CONFLICT (project_id, function_name, unique_key)
			WHERE unique_key IS NOT NULL AND status IN ('PENDING', 'IN_PROGRESS') DO NOTHING`
	}
	res, err := q.namedExec(ctx, query, it)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ActiveItemByKey is the item of a project and function holding a unique key
// in one of statuses (ErrNotFound: none).
func (q QueueQueries) ActiveItemByKey(ctx context.Context, projectID, function, key string, statuses []domain.QueueItemStatus) (*domain.QueueItem, error) {
	query, args := in(`SELECT * FROM queue_items WHERE project_id = ? AND function_name = ? AND unique_key = ?
		AND status IN (?)`, projectID, function, key, statuses)
	var it domain.QueueItem
	if err := q.get(ctx, &it, query, args...); err != nil {
		return nil, err
	}
	return &it, nil
}

// ItemForUpdate loads an item and, in a PostgreSQL transaction, locks it.
func (q QueueQueries) ItemForUpdate(ctx context.Context, id string) (*domain.QueueItem, error) {
	var it domain.QueueItem
	if err := q.get(ctx, &it, `SELECT * FROM queue_items WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &it, nil
}

// ItemsByIDs loads queue items by id.
func (q QueueQueries) ItemsByIDs(ctx context.Context, ids []string) ([]*domain.QueueItem, error) {
	return byIDs[domain.QueueItem](ctx, q.Q, "queue_items", ids)
}

// UpdateItem writes an item's state after an attempt's outcome, a cancel or
// a rescue.
func (q QueueQueries) UpdateItem(ctx context.Context, it *domain.QueueItem) error {
	_, err := q.namedExec(ctx, `UPDATE queue_items SET status = :status, attempt = :attempt,
		scheduled_at = :scheduled_at, error_message = :error_message, errors = :errors, result = :result,
		claimed_by = :claimed_by, claimer_id = :claimer_id, lease_expires_at = :lease_expires_at,
		finished_at = :finished_at, updated_at = :updated_at WHERE id = :id`, it)
	return err
}

// ClaimCandidates picks up to limit due PENDING items of functions in the
// projects of scope — highest priority first, then oldest — and locks them;
// on PostgreSQL items another claimer holds locked are passed over (SKIP
// LOCKED), so concurrent claimers never take the same item. SQLite's
// immediate transaction holds the single write lock instead.
func (q QueueQueries) ClaimCandidates(ctx context.Context, functions []string, scope domain.ProjectScope,
	now time.Time, limit int) ([]*domain.QueueItem, error) {
	query := `SELECT i.* FROM queue_items i WHERE i.status = ? AND i.function_name IN (?) AND i.scheduled_at <= ?`
	args := []any{domain.QueuePending, functions, now}
	switch {
	case scope.All:
	case scope.ProjectID != "":
		query += ` AND i.project_id = ?`
		args = append(args, scope.ProjectID)
	default:
		query += ` AND i.project_id IN (SELECT p.id FROM projects p WHERE p.owner_id = ?)`
		args = append(args, scope.OwnerID)
	}
	query += ` ORDER BY i.priority DESC, i.created_at, i.id LIMIT ?` + q.skipLocked()
	args = append(args, limit)
	query, args = in(query, args...)
	var out []*domain.QueueItem
	err := q.selectx(ctx, &out, query, args...)
	return out, err
}

// ClaimItems hands items (locked by ClaimCandidates) to a claimer: IN_PROGRESS,
// attempt + 1, leased until leaseUntil.
func (q QueueQueries) ClaimItems(ctx context.Context, ids []string, claimedBy, claimerID string, leaseUntil, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	query, args := in(`UPDATE queue_items SET status = ?, attempt = attempt + 1, claimed_by = ?, claimer_id = ?,
		lease_expires_at = ?, updated_at = ? WHERE id IN (?)`,
		domain.QueueInProgress, claimedBy, claimerID, leaseUntil, now, ids)
	_, err := q.exec(ctx, query, args...)
	return err
}

// ExtendLease moves an item's lease to until.
func (q QueueQueries) ExtendLease(ctx context.Context, id string, until, now time.Time) error {
	_, err := q.exec(ctx, `UPDATE queue_items SET lease_expires_at = ?, updated_at = ? WHERE id = ?`, until, now, id)
	return err
}

// ExpiredItems lists up to limit IN_PROGRESS items whose lease ended before now.
func (q QueueQueries) ExpiredItems(ctx context.Context, now time.Time, limit int) ([]string, error) {
	var out []string
	err := q.selectx(ctx, &out, `SELECT id FROM queue_items WHERE status = ? AND lease_expires_at < ?
		ORDER BY lease_expires_at LIMIT ?`, domain.QueueInProgress, now, limit)
	return out, err
}

// ExpiredItemForRescue loads and locks an item if it is still IN_PROGRESS with
// a lease that ended before now; on PostgreSQL an item another sweeper (or its
// claimer) holds locked is skipped. ErrNotFound: nothing to rescue.
func (q QueueQueries) ExpiredItemForRescue(ctx context.Context, id string, now time.Time) (*domain.QueueItem, error) {
	var it domain.QueueItem
	if err := q.get(ctx, &it, `SELECT * FROM queue_items WHERE id = ? AND status = ? AND lease_expires_at < ?`+q.skipLocked(),
		id, domain.QueueInProgress, now); err != nil {
		return nil, err
	}
	return &it, nil
}

// QueueItemFilter narrows Items.
type QueueItemFilter struct {
	Statuses     []domain.QueueItemStatus
	FunctionName *string
	EntityID     *string
}

// Items pages a project's queue items, newest first.
func (q QueueQueries) Items(ctx context.Context, projectID string, f QueueItemFilter, page domain.PageArgs) (domain.Page[*domain.QueueItem], error) {
	pq := &pageQuery[*domain.QueueItem]{
		selectCols: "i.*", from: "queue_items i", idCol: "i.id",
		key:   sortKey{col: "i.created_at", kind: keyTime, desc: true},
		keyOf: func(i *domain.QueueItem) any { return i.CreatedAt }, idOf: func(i *domain.QueueItem) string { return i.ID },
		page: page,
	}
	pq.filter("i.project_id = ?", projectID)
	if len(f.Statuses) > 0 {
		cond, args := in("i.status IN (?)", f.Statuses)
		pq.filter(cond, args...)
	}
	if f.FunctionName != nil {
		pq.filter("i.function_name = ?", *f.FunctionName)
	}
	if f.EntityID != nil {
		pq.filter("i.entity_id = ?", *f.EntityID)
	}
	pages, err := pq.fetch(ctx, q.Q)
	if err != nil {
		return domain.Page[*domain.QueueItem]{}, err
	}
	pg := pages[""]
	pg.Total = func(ctx context.Context) (int, error) {
		n, err := pq.count(ctx, q.db.pool())
		return n[""], err
	}
	return pg, nil
}
