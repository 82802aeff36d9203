package store

import (
	"context"
	"time"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// InsertActionToolMap inserts a map.
func (q CatalogQueries) InsertActionToolMap(ctx context.Context, m *domain.ActionToolMap) error {
	_, err := q.namedExec(ctx, `INSERT INTO action_tool_maps (id, suite_id, mcp_server_id, version, created_at, updated_at)
		VALUES (:id, :suite_id, :mcp_server_id, :version, :created_at, :updated_at)`, m)
	return err
}

// ActionToolMapsByIDs loads maps by id.
func (q CatalogQueries) ActionToolMapsByIDs(ctx context.Context, ids []string) ([]*domain.ActionToolMap, error) {
	return byIDs[domain.ActionToolMap](ctx, q.Q, "action_tool_maps", ids)
}

// ActionToolMapForUpdate loads a map, locking its row in a PostgreSQL
// transaction, so that its version is read and raised by one writer at a time.
func (q CatalogQueries) ActionToolMapForUpdate(ctx context.Context, id string) (*domain.ActionToolMap, error) {
	var m domain.ActionToolMap
	if err := q.get(ctx, &m, `SELECT * FROM action_tool_maps WHERE id = ?`+q.forUpdate(), id); err != nil {
		return nil, err
	}
	return &m, nil
}

// BumpActionToolMap raises a map's version by one, after a change to its mappings.
func (q CatalogQueries) BumpActionToolMap(ctx context.Context, id string, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE action_tool_maps SET version = version + 1, updated_at = ? WHERE id = ?`, at, id)
	return err
}

func mapPage(page domain.PageArgs) *pageQuery[*domain.ActionToolMap] {
	return createdPage("atm", "action_tool_maps", func(m *domain.ActionToolMap) time.Time { return m.CreatedAt },
		func(m *domain.ActionToolMap) string { return m.ID }, page)
}

// ActionToolMapsBySuites pages maps per suite, oldest first.
func (q CatalogQueries) ActionToolMapsBySuites(ctx context.Context, suites []string, page domain.PageArgs) (map[string]domain.Page[*domain.ActionToolMap], error) {
	return childPages(ctx, q.Q, mapPage(page), "atm.suite_id", suites, func(m *domain.ActionToolMap) string { return m.SuiteID })
}

// CountActionToolMapsBySuites counts maps per suite.
func (q CatalogQueries) CountActionToolMapsBySuites(ctx context.Context, suites []string) (map[string]int, error) {
	return childCounts(ctx, q.Q, mapPage(domain.PageArgs{}), "atm.suite_id", suites)
}

// ActionToolMapsByServers pages maps per server, oldest first.
func (q CatalogQueries) ActionToolMapsByServers(ctx context.Context, servers []string, page domain.PageArgs) (map[string]domain.Page[*domain.ActionToolMap], error) {
	return childPages(ctx, q.Q, mapPage(page), "atm.mcp_server_id", servers, func(m *domain.ActionToolMap) string { return m.McpServerID })
}

// CountActionToolMapsByServers counts maps per server.
func (q CatalogQueries) CountActionToolMapsByServers(ctx context.Context, servers []string) (map[string]int, error) {
	return childCounts(ctx, q.Q, mapPage(domain.PageArgs{}), "atm.mcp_server_id", servers)
}

// DeleteActionToolMap deletes a map and its mappings.
func (q CatalogQueries) DeleteActionToolMap(ctx context.Context, id string) error {
	_, err := q.exec(ctx, `DELETE FROM action_tool_maps WHERE id = ?`, id)
	return err
}

// InsertMapping inserts an action-to-tool mapping.
func (q CatalogQueries) InsertMapping(ctx context.Context, m *domain.ActionToolMapping) error {
	_, err := q.namedExec(ctx, `INSERT INTO action_tool_mappings (id, action_tool_map_id, action_id, tool_id, created_at)
		VALUES (:id, :action_tool_map_id, :action_id, :tool_id, :created_at)`, m)
	return err
}

// MappingsByIDs loads mappings by id.
func (q CatalogQueries) MappingsByIDs(ctx context.Context, ids []string) ([]*domain.ActionToolMapping, error) {
	return byIDs[domain.ActionToolMapping](ctx, q.Q, "action_tool_mappings", ids)
}

func mappingPage(page domain.PageArgs) *pageQuery[*domain.ActionToolMapping] {
	return createdPage("mp", "action_tool_mappings", func(m *domain.ActionToolMapping) time.Time { return m.CreatedAt },
		func(m *domain.ActionToolMapping) string { return m.ID }, page)
}

// MappingsByMaps pages mappings per map, oldest first.
func (q CatalogQueries) MappingsByMaps(ctx context.Context, maps []string, page domain.PageArgs) (map[string]domain.Page[*domain.ActionToolMapping], error) {
	return childPages(ctx, q.Q, mappingPage(page), "mp.action_tool_map_id", maps, func(m *domain.ActionToolMapping) string { return m.ActionToolMapID })
}

// CountMappingsByMaps counts mappings per map.
func (q CatalogQueries) CountMappingsByMaps(ctx context.Context, maps []string) (map[string]int, error) {
	return childCounts(ctx, q.Q, mappingPage(domain.PageArgs{}), "mp.action_tool_map_id", maps)
}

// MappedToolNames lists the names of the tools a map maps actions to.
func (q CatalogQueries) MappedToolNames(ctx context.Context, mapID string) ([]string, error) {
	var out []string
	err := q.selectx(ctx, &out, `SELECT DISTINCT t.name FROM action_tool_mappings mp JOIN tools t ON t.id = mp.tool_id
		WHERE mp.action_tool_map_id = ? ORDER BY t.name`, mapID)
	return out, err
}

// DeleteMapping deletes a mapping and its parameter mappings.
func (q CatalogQueries) DeleteMapping(ctx context.Context, id string) error {
	_, err := q.exec(ctx, `DELETE FROM action_tool_mappings WHERE id = ?`, id)
	return err
}

// InsertParameterMapping inserts a parameter mapping.
func (q CatalogQueries) InsertParameterMapping(ctx context.Context, m *domain.ActionToolParameterMapping) error {
	_, err := q.namedExec(ctx, `INSERT INTO action_tool_parameter_mappings (id, action_tool_mapping_id, action_parameter_id,
		tool_parameter_id, created_at) VALUES (:id, :action_tool_mapping_id, :action_parameter_id, :tool_parameter_id, :created_at)`, m)
	return err
}

// ParameterMappingsByIDs loads parameter mappings by id.
func (q CatalogQueries) ParameterMappingsByIDs(ctx context.Context, ids []string) ([]*domain.ActionToolParameterMapping, error) {
	return byIDs[domain.ActionToolParameterMapping](ctx, q.Q, "action_tool_parameter_mappings", ids)
}

func parameterMappingPage(page domain.PageArgs) *pageQuery[*domain.ActionToolParameterMapping] {
	return createdPage("pm", "action_tool_parameter_mappings", func(m *domain.ActionToolParameterMapping) time.Time { return m.CreatedAt },
		func(m *domain.ActionToolParameterMapping) string { return m.ID }, page)
}

// ParameterMappingsByMappings pages parameter mappings per mapping, oldest first.
func (q CatalogQueries) ParameterMappingsByMappings(ctx context.Context, mappings []string, page domain.PageArgs) (map[string]domain.Page[*domain.ActionToolParameterMapping], error) {
	return childPages(ctx, q.Q, parameterMappingPage(page), "pm.action_tool_mapping_id", mappings,
		func(m *domain.ActionToolParameterMapping) string { return m.ActionToolMappingID })
}

// CountParameterMappingsByMappings counts parameter mappings per mapping.
func (q CatalogQueries) CountParameterMappingsByMappings(ctx context.Context, mappings []string) (map[string]int, error) {
	return childCounts(ctx, q.Q, parameterMappingPage(domain.PageArgs{}), "pm.action_tool_mapping_id", mappings)
}

// DeleteParameterMapping deletes a parameter mapping.
func (q CatalogQueries) DeleteParameterMapping(ctx context.Context, id string) error {
	_, err := q.exec(ctx, `DELETE FROM action_tool_parameter_mappings WHERE id = ?`, id)
	return err
}

// Coverages computes the coverage of maps (domain.Coverage), three statements
// for any number of maps.
func (q CatalogQueries) Coverages(ctx context.Context, maps []string) (map[string]*domain.Coverage, error) {
	out := make(map[string]*domain.Coverage, len(maps))
	if len(maps) == 0 {
		return out, nil
	}
	for _, id := range maps {
		out[id] = &domain.Coverage{UnmappedActions: []*domain.Action{}, UnfedToolParameters: []*domain.ToolParameter{},
			UnusedActionParameters: []*domain.ActionParameter{}}
	}
	var actions []mapAction
	query, args := in(`SELECT m.id AS map_id, a.* FROM action_tool_maps m JOIN actions a ON a.suite_id = m.suite_id
		WHERE m.id IN (?) AND NOT EXISTS (SELECT 1 FROM action_tool_mappings mp WHERE mp.action_tool_map_id = m.id AND mp.action_id = a.id)
		ORDER BY a.name, a.id`, maps)
	if err := q.selectx(ctx, &actions, query, args...); err != nil {
		return nil, err
	}
	for i := range actions {
		c := out[actions[i].MapID]
		c.UnmappedActions = append(c.UnmappedActions, &actions[i].Action)
	}
	// A tool mapped from two actions is reported once when either leaves a
	// required parameter unfed.
	var toolParams []mapToolParameter
	query, args = in(`SELECT DISTINCT mp.action_tool_map_id AS map_id, tp.* FROM action_tool_mappings mp
		JOIN tool_parameters tp ON tp.tool_id = mp.tool_id
		WHERE mp.action_tool_map_id IN (?) AND tp.required AND NOT EXISTS (SELECT 1 FROM action_tool_parameter_mappings pm
			WHERE pm.action_tool_mapping_id = mp.id AND pm.tool_parameter_id = tp.id)
		ORDER BY tp.tool_id, tp.position, tp.id`, maps)
	if err := q.selectx(ctx, &toolParams, query, args...); err != nil {
		return nil, err
	}
	for i := range toolParams {
		c := out[toolParams[i].MapID]
		c.UnfedToolParameters = append(c.UnfedToolParameters, &toolParams[i].ToolParameter)
	}
	var actionParams []mapActionParameter
	query, args = in(`SELECT mp.action_tool_map_id AS map_id, ap.* FROM action_tool_mappings mp
		JOIN action_parameters ap ON ap.action_id = mp.action_id
		WHERE mp.action_tool_map_id IN (?) AND ap.required AND NOT EXISTS (SELECT 1 FROM action_tool_parameter_mappings pm
			WHERE pm.action_tool_mapping_id = mp.id AND pm.action_parameter_id = ap.id)
		ORDER BY ap.action_id, ap.position, ap.id`, maps)
	if err := q.selectx(ctx, &actionParams, query, args...); err != nil {
		return nil, err
	}
	for i := range actionParams {
		c := out[actionParams[i].MapID]
		c.UnusedActionParameters = append(c.UnusedActionParameters, &actionParams[i].ActionParameter)
	}
	return out, nil
}

// Coverage rows: one catalog row with the map it is reported for.
type (
	mapAction struct {
		MapID string `db:"map_id"`
		domain.Action
	}
	mapToolParameter struct {
		MapID string `db:"map_id"`
		domain.ToolParameter
	}
	mapActionParameter struct {
		MapID string `db:"map_id"`
		domain.ActionParameter
	}
)
