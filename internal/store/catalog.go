package store

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// The catalog: suites, actions, MCP servers, tools, their parameters, and the
// maps that bind actions to tools.

// InsertSuite inserts a suite.
func (q CatalogQueries) InsertSuite(ctx context.Context, s *domain.Suite) error {
	_, err := q.exec(ctx, `INSERT INTO suites (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)`,
		s.ID, s.Name, s.CreatedAt, s.UpdatedAt)
	return err
}

// SuitesByIDs loads suites by id.
func (q CatalogQueries) SuitesByIDs(ctx context.Context, ids []string) ([]*domain.Suite, error) {
	return byIDs[domain.Suite](ctx, q.Q, "suites", ids)
}

func suitePage(page domain.PageArgs) *pageQuery[*domain.Suite] {
	return namePage("s", "suites", func(s *domain.Suite) string { return s.Name }, func(s *domain.Suite) string { return s.ID }, page)
}

// Suites pages every suite by name.
func (q CatalogQueries) Suites(ctx context.Context, page domain.PageArgs) (domain.Page[*domain.Suite], error) {
	return rootPage(ctx, q.Q, suitePage(page))
}

// DeleteSuite deletes a suite and its actions.
func (q CatalogQueries) DeleteSuite(ctx context.Context, id string) error {
	_, err := q.exec(ctx, `DELETE FROM suites WHERE id = ?`, id)
	return err
}

// InsertAction inserts an action.
func (q CatalogQueries) InsertAction(ctx context.Context, a *domain.Action) error {
	_, err := q.namedExec(ctx, `INSERT INTO actions (id, suite_id, name, description, created_at, updated_at)
		VALUES (:id, :suite_id, :name, :description, :created_at, :updated_at)`, a)
	return err
}

// ActionsByIDs loads actions by id.
func (q CatalogQueries) ActionsByIDs(ctx context.Context, ids []string) ([]*domain.Action, error) {
	return byIDs[domain.Action](ctx, q.Q, "actions", ids)
}

func actionPage(page domain.PageArgs) *pageQuery[*domain.Action] {
	return namePage("a", "actions", func(a *domain.Action) string { return a.Name }, func(a *domain.Action) string { return a.ID }, page)
}

// ActionsBySuites pages actions per suite, by name.
func (q CatalogQueries) ActionsBySuites(ctx context.Context, suites []string, page domain.PageArgs) (map[string]domain.Page[*domain.Action], error) {
	return childPages(ctx, q.Q, actionPage(page), "a.suite_id", suites, func(a *domain.Action) string { return a.SuiteID })
}

// CountActionsBySuites counts actions per suite.
func (q CatalogQueries) CountActionsBySuites(ctx context.Context, suites []string) (map[string]int, error) {
	return childCounts(ctx, q.Q, actionPage(domain.PageArgs{}), "a.suite_id", suites)
}

// DeleteAction deletes an action and its parameters.
func (q CatalogQueries) DeleteAction(ctx context.Context, id string) error {
	_, err := q.exec(ctx, `DELETE FROM actions WHERE id = ?`, id)
	return err
}

// InsertActionParameters inserts parameters of actions.
func (q CatalogQueries) InsertActionParameters(ctx context.Context, ps []*domain.ActionParameter) error {
	return inChunks(ps, func(part []*domain.ActionParameter) error {
		_, err := q.namedExec(ctx, `INSERT INTO action_parameters (id, action_id, name, type, required, description, position, created_at)
			VALUES (:id, :action_id, :name, :type, :required, :description, :position, :created_at)`, part)
		return err
	})
}

// ActionParametersByIDs loads action parameters by id.
func (q CatalogQueries) ActionParametersByIDs(ctx context.Context, ids []string) ([]*domain.ActionParameter, error) {
	return byIDs[domain.ActionParameter](ctx, q.Q, "action_parameters", ids)
}

func actionParameterPage(page domain.PageArgs) *pageQuery[*domain.ActionParameter] {
	return &pageQuery[*domain.ActionParameter]{
		selectCols: "ap.*", from: "action_parameters ap", idCol: "ap.id",
		key:   sortKey{col: "ap.position", kind: keyInt},
		keyOf: func(p *domain.ActionParameter) any { return p.Position }, idOf: func(p *domain.ActionParameter) string { return p.ID },
		page: page,
	}
}

// ActionParametersByActions pages parameters per action, in declared order.
func (q CatalogQueries) ActionParametersByActions(ctx context.Context, actions []string, page domain.PageArgs) (map[string]domain.Page[*domain.ActionParameter], error) {
	return childPages(ctx, q.Q, actionParameterPage(page), "ap.action_id", actions, func(p *domain.ActionParameter) string { return p.ActionID })
}

// CountActionParametersByActions counts parameters per action.
func (q CatalogQueries) CountActionParametersByActions(ctx context.Context, actions []string) (map[string]int, error) {
	return childCounts(ctx, q.Q, actionParameterPage(domain.PageArgs{}), "ap.action_id", actions)
}

// InsertMcpServer inserts an MCP server.
func (q CatalogQueries) InsertMcpServer(ctx context.Context, m *domain.McpServer) error {
	_, err := q.exec(ctx, `INSERT INTO mcp_servers (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)`,
		m.ID, m.Name, m.CreatedAt, m.UpdatedAt)
	return err
}

// McpServersByIDs loads servers by id.
func (q CatalogQueries) McpServersByIDs(ctx context.Context, ids []string) ([]*domain.McpServer, error) {
	return byIDs[domain.McpServer](ctx, q.Q, "mcp_servers", ids)
}

// McpServerForUpdate loads a server, locking its row in a PostgreSQL
// transaction: imports into one server run one at a time.
func (q CatalogQueries) McpServerForUpdate(ctx context.Context, id string) (*domain.McpServer, error) {
	var m domain.McpServer
	if err := q.get(ctx, &m, `SELECT * FROM mcp_servers WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &m, nil
}

// TouchMcpServer records a change to a server's tools.
func (q CatalogQueries) TouchMcpServer(ctx context.Context, id string, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE mcp_servers SET updated_at = ? WHERE id = ?`, at, id)
	return err
}

// McpServers pages every server by name.
func (q CatalogQueries) McpServers(ctx context.Context, page domain.PageArgs) (domain.Page[*domain.McpServer], error) {
	return rootPage(ctx, q.Q, namePage("m", "mcp_servers", func(m *domain.McpServer) string { return m.Name },
		func(m *domain.McpServer) string { return m.ID }, page))
}

// DeleteMcpServer deletes a server and its tools.
func (q CatalogQueries) DeleteMcpServer(ctx context.Context, id string) error {
	_, err := q.exec(ctx, `DELETE FROM mcp_servers WHERE id = ?`, id)
	return err
}

const toolColumns = `id, mcp_server_id, name, description, input_schema, created_at, updated_at`

// InsertTools inserts tools.
func (q CatalogQueries) InsertTools(ctx context.Context, ts []*domain.Tool) error {
	return inChunks(ts, func(part []*domain.Tool) error {
		_, err := q.namedExec(ctx, `INSERT INTO tools (`+toolColumns+`) VALUES (`+namedList(toolColumns)+`)`, part)
		return err
	})
}

// UpdateTool writes a tool's description and schema.
func (q CatalogQueries) UpdateTool(ctx context.Context, t *domain.Tool) error {
	_, err := q.exec(ctx, `UPDATE tools SET description = ?, input_schema = ?, updated_at = ? WHERE id = ?`,
		t.Description, t.InputSchema, t.UpdatedAt, t.ID)
	return err
}

// ToolsByIDs loads tools by id.
func (q CatalogQueries) ToolsByIDs(ctx context.Context, ids []string) ([]*domain.Tool, error) {
	return byIDs[domain.Tool](ctx, q.Q, "tools", ids)
}

// ToolsOfServer lists every tool of a server.
func (q CatalogQueries) ToolsOfServer(ctx context.Context, serverID string) ([]*domain.Tool, error) {
	return byColumn[domain.Tool](ctx, q.Q, "tools", "mcp_server_id", []string{serverID}, "name, id")
}

func toolPage(page domain.PageArgs) *pageQuery[*domain.Tool] {
	return namePage("t", "tools", func(t *domain.Tool) string { return t.Name }, func(t *domain.Tool) string { return t.ID }, page)
}

// ToolsByServers pages tools per server, by name.
func (q CatalogQueries) ToolsByServers(ctx context.Context, servers []string, page domain.PageArgs) (map[string]domain.Page[*domain.Tool], error) {
	return childPages(ctx, q.Q, toolPage(page), "t.mcp_server_id", servers, func(t *domain.Tool) string { return t.McpServerID })
}

// CountToolsByServers counts tools per server.
func (q CatalogQueries) CountToolsByServers(ctx context.Context, servers []string) (map[string]int, error) {
	return childCounts(ctx, q.Q, toolPage(domain.PageArgs{}), "t.mcp_server_id", servers)
}

// DeleteTool deletes a tool and its parameters.
func (q CatalogQueries) DeleteTool(ctx context.Context, id string) error {
	_, err := q.exec(ctx, `DELETE FROM tools WHERE id = ?`, id)
	return err
}

const toolParameterColumns = `id, tool_id, name, type, required, description, position, json_schema, created_at`

// InsertToolParameters inserts parameters of tools.
func (q CatalogQueries) InsertToolParameters(ctx context.Context, ps []*domain.ToolParameter) error {
	return inChunks(ps, func(part []*domain.ToolParameter) error {
		_, err := q.namedExec(ctx, `INSERT INTO tool_parameters (`+toolParameterColumns+`) VALUES (`+namedList(toolParameterColumns)+`)`, part)
		return err
	})
}

// UpdateToolParameter writes a parameter's type, flags, description, order and schema.
func (q CatalogQueries) UpdateToolParameter(ctx context.Context, p *domain.ToolParameter) error {
	_, err := q.exec(ctx, `UPDATE tool_parameters SET type = ?, required = ?, description = ?, position = ?, json_schema = ? WHERE id = ?`,
		p.Type, p.Required, p.Description, p.Position, p.JSONSchema, p.ID)
	return err
}

// DeleteToolParameters deletes tool parameters.
func (q CatalogQueries) DeleteToolParameters(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	query, args := in(`DELETE FROM tool_parameters WHERE id IN (?)`, ids)
	_, err := q.exec(ctx, query, args...)
	return err
}

// ToolParametersByIDs loads tool parameters by id.
func (q CatalogQueries) ToolParametersByIDs(ctx context.Context, ids []string) ([]*domain.ToolParameter, error) {
	return byIDs[domain.ToolParameter](ctx, q.Q, "tool_parameters", ids)
}

// ToolParametersOfTools lists the parameters of tools in order.
func (q CatalogQueries) ToolParametersOfTools(ctx context.Context, tools []string) ([]*domain.ToolParameter, error) {
	return byColumn[domain.ToolParameter](ctx, q.Q, "tool_parameters", "tool_id", tools, "tool_id, position, id")
}

func toolParameterPage(page domain.PageArgs) *pageQuery[*domain.ToolParameter] {
	return &pageQuery[*domain.ToolParameter]{
		selectCols: "tp.*", from: "tool_parameters tp", idCol: "tp.id",
		key:   sortKey{col: "tp.position", kind: keyInt},
		keyOf: func(p *domain.ToolParameter) any { return p.Position }, idOf: func(p *domain.ToolParameter) string { return p.ID },
		page: page,
	}
}

// ToolParametersByTools pages parameters per tool, in schema order.
func (q CatalogQueries) ToolParametersByTools(ctx context.Context, tools []string, page domain.PageArgs) (map[string]domain.Page[*domain.ToolParameter], error) {
	return childPages(ctx, q.Q, toolParameterPage(page), "tp.tool_id", tools, func(p *domain.ToolParameter) string { return p.ToolID })
}

// CountToolParametersByTools counts parameters per tool.
func (q CatalogQueries) CountToolParametersByTools(ctx context.Context, tools []string) (map[string]int, error) {
	return childCounts(ctx, q.Q, toolParameterPage(domain.PageArgs{}), "tp.tool_id", tools)
}

// ParameterFeed is a group of parameter mappings from one action parameter into
// one tool parameter, with both types.
type ParameterFeed struct {
	ToolName          string               `db:"tool_name"`
	ToolParameter     string               `db:"tool_parameter"`
	ToolType          domain.ParameterType `db:"tool_type"`
	ActionName        string               `db:"action_name"`
	ActionParameter   string               `db:"action_parameter"`
	ActionType        domain.ParameterType `db:"action_type"`
	ParameterMappings int                  `db:"n"`
}

// FeedsIntoTools lists the parameter mappings into the given tools, grouped by
// action parameter and tool parameter, with both types; whether a type fits
// is domain.ParameterType.Feeds.
func (q CatalogQueries) FeedsIntoTools(ctx context.Context, tools []string) ([]ParameterFeed, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	query, args := in(`SELECT t.name AS tool_name, tp.name AS tool_parameter, tp.type AS tool_type,
			a.name AS action_name, ap.name AS action_parameter, ap.type AS action_type, COUNT(*) AS n
		FROM action_tool_parameter_mappings pm
		JOIN tool_parameters tp ON tp.id = pm.tool_parameter_id
		JOIN tools t ON t.id = tp.tool_id
		JOIN action_parameters ap ON ap.id = pm.action_parameter_id
		JOIN actions a ON a.id = ap.action_id
		WHERE tp.tool_id IN (?)
		GROUP BY t.name, tp.name, tp.type, a.name, ap.name, ap.type
		ORDER BY t.name, tp.name, a.name, ap.name`, tools)
	var out []ParameterFeed
	err := q.selectx(ctx, &out, query, args...)
	return out, err
}

// ParameterMappingsOfToolParameters counts, per tool parameter, the parameter
// mappings that feed it.
func (q CatalogQueries) ParameterMappingsOfToolParameters(ctx context.Context, ids []string) (map[string]int, error) {
	return countBy(ctx, q.Q, "action_tool_parameter_mappings", "tool_parameter_id", ids)
}

// References counts, for each named kind of row, the rows that refer to id
// through a foreign key: the answer to "what still uses this?".
type References []struct {
	What string
	N    int
}

// CountReferences runs one statement counting rows of each (table, column)
// whose column equals id.
func (q CatalogQueries) CountReferences(ctx context.Context, id string, refs ...RefSource) (References, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	query := "SELECT "
	args := make([]any, 0, len(refs))
	for i, r := range refs {
		if i > 0 {
			query += ", "
		}
		query += "(SELECT COUNT(*) FROM " + r.Table + " WHERE " + r.Column + " = ?)"
		args = append(args, id)
	}
	if err := q.flush(ctx); err != nil {
		return nil, err
	}
	ctx, span := q.startStatement(ctx, query)
	rows, err := q.ext.QueryxContext(ctx, q.ext.Rebind(query), args...)
	q.db.statements.Add(1)
	if err != nil {
		err = mapErr(err)
		endStatement(span, err)
		return nil, err
	}
	defer endStatement(span, nil)
	defer rows.Close()
	counts := make([]any, len(refs))
	ns := make([]int, len(refs))
	for i := range counts {
		counts[i] = &ns[i]
	}
	if !rows.Next() {
		return nil, mapErr(rows.Err())
	}
	if err := rows.Scan(counts...); err != nil {
		return nil, mapErr(err)
	}
	out := make(References, len(refs))
	for i, r := range refs {
		out[i].What, out[i].N = r.What, ns[i]
	}
	return out, mapErr(rows.Err())
}

// RefSource is a foreign key column that refers to some entity: rows of Table
// whose Column holds its id, called What ("action tool maps").
type RefSource struct {
	Table, Column, What string
}
