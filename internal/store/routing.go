package store

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

const (
	routerColumns = `id, project_id, status, model, temperature, title, preview, agent_metadata, schema_version,
	created_at, updated_at`
	routerMessageColumns = `id, router_id, project_id, role, content, created_at`
	plannerColumns       = `id, project_id, planner_name, user_question, instruction, execution_plan, model, temperature,
	failed_task_limit, failed_task_count, status, user_response, next_task, variable_file_paths, image_file_paths,
	agent_metadata, schema_version, created_at, updated_at, workings, request_validation`
	workerColumns = `id, planner_id, project_id, worker_name, task_status, next_task, task_description,
	acceptance_criteria, task_context, task_result, querying_structured_data, image_keys, variable_keys, tools,
	input_variable_filepaths, input_image_filepaths, output_variable_filepaths, output_image_filepaths,
	current_attempt, tables, filepaths, agent_metadata, schema_version, created_at, updated_at, failures`
	agentMessageColumns = `id, owner_id, project_id, role, content, created_at`
	linkColumns         = `id, router_id, planner_id, message_id, relationship_type, created_at`
)

func (q RoutingQueries) insert(ctx context.Context, table, cols string, row any) error {
	_, err := q.namedExec(ctx, `INSERT INTO `+table+` (`+cols+`) VALUES (`+namedList(cols)+`)`, row)
	return err
}

// InsertRouter inserts a router.
func (q RoutingQueries) InsertRouter(ctx context.Context, r *domain.Router) error {
	return q.insert(ctx, "routers", routerColumns, r)
}

// UpdateRouter writes a router's status, preview and update time.
func (q RoutingQueries) UpdateRouter(ctx context.Context, r *domain.Router) error {
	_, err := q.namedExec(ctx, `UPDATE routers SET status = :status, preview = :preview, updated_at = :updated_at
		WHERE id = :id`, r)
	return err
}

// RouterForUpdate loads a router and, in a PostgreSQL transaction, locks it.
func (q RoutingQueries) RouterForUpdate(ctx context.Context, id string) (*domain.Router, error) {
	var r domain.Router
	if err := q.get(ctx, &r, `SELECT * FROM routers WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &r, nil
}

// RoutersByIDs loads routers by id.
func (q RoutingQueries) RoutersByIDs(ctx context.Context, ids []string) ([]*domain.Router, error) {
	return byIDs[domain.Router](ctx, q.Q, "routers", ids)
}

// Routers pages a project's routers, newest first, optionally of some statuses.
func (q RoutingQueries) Routers(ctx context.Context, projectID string, statuses []domain.RouterStatus, page domain.PageArgs) (domain.Page[*domain.Router], error) {
	pq := &pageQuery[*domain.Router]{
		selectCols: "r.*", from: "routers r", idCol: "r.id",
		key:   sortKey{col: "r.created_at", kind: keyTime, desc: true},
		keyOf: func(r *domain.Router) any { return r.CreatedAt }, idOf: func(r *domain.Router) string { return r.ID },
		page: page,
	}
	pq.filter("r.project_id = ?", projectID)
	if len(statuses) > 0 {
		cond, args := in("r.status IN (?)", statuses)
		pq.filter(cond, args...)
	}
	pages, err := pq.fetch(ctx, q.Q)
	if err != nil {
		return domain.Page[*domain.Router]{}, err
	}
	pg := pages[""]
	pg.Total = func(ctx context.Context) (int, error) {
		n, err := pq.count(ctx, q.db.pool())
		return n[""], err
	}
	return pg, nil
}

// InsertRouterMessage inserts a router message.
func (q RoutingQueries) InsertRouterMessage(ctx context.Context, m *domain.RouterMessage) error {
	return q.insert(ctx, "router_messages", routerMessageColumns, m)
}

// RouterMessagesByIDs loads router messages by id.
func (q RoutingQueries) RouterMessagesByIDs(ctx context.Context, ids []string) ([]*domain.RouterMessage, error) {
	return byIDs[domain.RouterMessage](ctx, q.Q, "router_messages", ids)
}

func routerMessagePageQuery(routers []string, page domain.PageArgs) *pageQuery[*domain.RouterMessage] {
	return &pageQuery[*domain.RouterMessage]{
		selectCols: "m.*", from: "router_messages m", idCol: "m.id",
		key:   sortKey{col: "m.created_at", kind: keyTime},
		keyOf: func(m *domain.RouterMessage) any { return m.CreatedAt }, idOf: func(m *domain.RouterMessage) string { return m.ID },
		parentCol: "m.router_id", parents: routers, parentOf: func(m *domain.RouterMessage) string { return m.RouterID },
		page: page,
	}
}

// MessagesOfRouters pages the messages of routers, oldest first, one page per router.
func (q RoutingQueries) MessagesOfRouters(ctx context.Context, routers []string, page domain.PageArgs) (map[string]domain.Page[*domain.RouterMessage], error) {
	return routerMessagePageQuery(routers, page).fetch(ctx, q.Q)
}

// CountMessagesOfRouters counts the messages of each router.
func (q RoutingQueries) CountMessagesOfRouters(ctx context.Context, routers []string) (map[string]int, error) {
	return routerMessagePageQuery(routers, domain.PageArgs{}).count(ctx, q.Q)
}

// NewestRouterMessage is a router's newest message (ErrNotFound: none).
func (q RoutingQueries) NewestRouterMessage(ctx context.Context, routerID string) (*domain.RouterMessage, error) {
	var m domain.RouterMessage
	if err := q.get(ctx, &m, `SELECT * FROM router_messages WHERE router_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`,
		routerID); err != nil {
		return nil, err
	}
	return &m, nil
}

// DeleteRouterMessages deletes a router's messages and returns how many.
func (q RoutingQueries) DeleteRouterMessages(ctx context.Context, routerID string) (int, error) {
	res, err := q.exec(ctx, `DELETE FROM router_messages WHERE router_id = ?`, routerID)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// InsertPlanner inserts a planner.
func (q RoutingQueries) InsertPlanner(ctx context.Context, p *domain.Planner) error {
	return q.insert(ctx, "planners", plannerColumns, p)
}

// UpdatePlanner writes every changeable field of a planner.
func (q RoutingQueries) UpdatePlanner(ctx context.Context, p *domain.Planner) error {
	_, err := q.namedExec(ctx, `UPDATE planners SET status = :status, execution_plan = :execution_plan,
		user_response = :user_response, next_task = :next_task, variable_file_paths = :variable_file_paths,
		image_file_paths = :image_file_paths, agent_metadata = :agent_metadata, failed_task_count = :failed_task_count,
		workings = :workings, request_validation = :request_validation, updated_at = :updated_at WHERE id = :id`, p)
	return err
}

// PlannerForUpdate loads a planner and, in a PostgreSQL transaction, locks it.
func (q RoutingQueries) PlannerForUpdate(ctx context.Context, id string) (*domain.Planner, error) {
	var p domain.Planner
	if err := q.get(ctx, &p, `SELECT * FROM planners WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &p, nil
}

// PlannersByIDs loads planners by id.
func (q RoutingQueries) PlannersByIDs(ctx context.Context, ids []string) ([]*domain.Planner, error) {
	return byIDs[domain.Planner](ctx, q.Q, "planners", ids)
}

// InsertWorker inserts a worker.
func (q RoutingQueries) InsertWorker(ctx context.Context, w *domain.Worker) error {
	return q.insert(ctx, "workers", workerColumns, w)
}

// UpdateWorker writes every changeable field of a worker.
func (q RoutingQueries) UpdateWorker(ctx context.Context, w *domain.Worker) error {
	_, err := q.namedExec(ctx, `UPDATE workers SET task_status = :task_status, next_task = :next_task,
		task_result = :task_result, output_variable_filepaths = :output_variable_filepaths,
		output_image_filepaths = :output_image_filepaths, agent_metadata = :agent_metadata,
		current_attempt = :current_attempt, failures = :failures, updated_at = :updated_at WHERE id = :id`, w)
	return err
}

// WorkerForUpdate loads a worker and, in a PostgreSQL transaction, locks it.
func (q RoutingQueries) WorkerForUpdate(ctx context.Context, id string) (*domain.Worker, error) {
	var w domain.Worker
	if err := q.get(ctx, &w, `SELECT * FROM workers WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &w, nil
}

// WorkersByIDs loads workers by id.
func (q RoutingQueries) WorkersByIDs(ctx context.Context, ids []string) ([]*domain.Worker, error) {
	return byIDs[domain.Worker](ctx, q.Q, "workers", ids)
}

// WorkersOfPlanners lists the workers of planners, oldest first.
func (q RoutingQueries) WorkersOfPlanners(ctx context.Context, planners []string) ([]*domain.Worker, error) {
	return byColumn[domain.Worker](ctx, q.Q, "workers", "planner_id", planners, "created_at, id")
}

// agentMessageTable is the table of the messages of a planner or a worker.
func agentMessageTable(kind domain.Kind) string {
	if kind == domain.KindPlanner {
		return "planner_messages"
	}
	return "worker_messages"
}

// InsertAgentMessage inserts a message of a planner or a worker (kind).
func (q RoutingQueries) InsertAgentMessage(ctx context.Context, kind domain.Kind, m *domain.AgentMessage) error {
	return q.insert(ctx, agentMessageTable(kind), agentMessageColumns, m)
}

// AgentMessagesByIDs loads messages of planners and workers by id.
func (q RoutingQueries) AgentMessagesByIDs(ctx context.Context, ids []string) ([]*domain.AgentMessage, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	query, args := in(`SELECT *, 'Planner' AS owner_kind FROM planner_messages WHERE id IN (?) UNION ALL
		SELECT *, 'Worker' AS owner_kind FROM worker_messages WHERE id IN (?)`, ids, ids)
	var out []*domain.AgentMessage
	err := q.selectx(ctx, &out, query, args...)
	return out, err
}

func agentMessagePageQuery(kind domain.Kind, owners []string, page domain.PageArgs) *pageQuery[*domain.AgentMessage] {
	return &pageQuery[*domain.AgentMessage]{
		selectCols: "m.*, '" + string(kind) + "' AS owner_kind", from: agentMessageTable(kind) + " m", idCol: "m.id",
		key:   sortKey{col: "m.created_at", kind: keyTime},
		keyOf: func(m *domain.AgentMessage) any { return m.CreatedAt }, idOf: func(m *domain.AgentMessage) string { return m.ID },
		parentCol: "m.owner_id", parents: owners, parentOf: func(m *domain.AgentMessage) string { return m.OwnerID },
		page: page,
	}
}

// AgentMessagesOf pages the messages of planners or workers (kind), oldest
// first, one page per owner.
func (q RoutingQueries) AgentMessagesOf(ctx context.Context, kind domain.Kind, owners []string, page domain.PageArgs) (map[string]domain.Page[*domain.AgentMessage], error) {
	return agentMessagePageQuery(kind, owners, page).fetch(ctx, q.Q)
}

// CountAgentMessagesOf counts the messages of each planner or worker (kind).
func (q RoutingQueries) CountAgentMessagesOf(ctx context.Context, kind domain.Kind, owners []string) (map[string]int, error) {
	return agentMessagePageQuery(kind, owners, domain.PageArgs{}).count(ctx, q.Q)
}

// DeleteAgentMessages deletes the messages of a planner or worker (kind).
func (q RoutingQueries) DeleteAgentMessages(ctx context.Context, kind domain.Kind, ownerID string) (int, error) {
	res, err := q.exec(ctx, `DELETE FROM `+agentMessageTable(kind)+` WHERE owner_id = ?`, ownerID)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// InsertLink inserts a router-planner link.
func (q RoutingQueries) InsertLink(ctx context.Context, l *domain.RouterPlannerLink) error {
	return q.insert(ctx, "router_planner_links", linkColumns, l)
}

// LinkExists reports whether a router-planner link without a message exists.
func (q RoutingQueries) RouterLinkExists(ctx context.Context, routerID, plannerID string) (bool, error) {
	var n int
	err := q.get(ctx, &n, `SELECT COUNT(*) FROM router_planner_links WHERE router_id = ? AND planner_id = ?
		AND message_id IS NULL`, routerID, plannerID)
	return n > 0, err
}

// LinksOf lists the links whose column (router_id, planner_id or message_id)
// is one of ids, oldest first.
func (q RoutingQueries) LinksOf(ctx context.Context, column string, ids []string) ([]*domain.RouterPlannerLink, error) {
	switch column {
	case "router_id", "planner_id", "message_id":
	default:
		panic("store: links by unknown column " + column)
	}
	return byColumn[domain.RouterPlannerLink](ctx, q.Q, "router_planner_links", column, ids, "created_at, id")
}

// Touch sets updated_at of a row of one of the routing tables.
func (q RoutingQueries) touch(ctx context.Context, table, id string, now time.Time) error {
	_, err := q.exec(ctx, `UPDATE `+table+` SET updated_at = ? WHERE id = ?`, now, id)
	return err
}

// TouchPlanner sets a planner's updated_at.
func (q RoutingQueries) TouchPlanner(ctx context.Context, id string, now time.Time) error {
	return q.touch(ctx, "planners", id, now)
}
