package catalog

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/loader"
	"github.com/taskgraph/taskgraph/internal/store"
)

// catalogLoaders are the request's batched reads of catalog entities. They hang
// off the request's loaders (under catalogLoadersKey), created on first use, and
// are cleared with them after every write.
type catalogLoaders struct {
	suites        *loader.Loader[string, *domain.Suite]
	actions       *loader.Loader[string, *domain.Action]
	actionParams  *loader.Loader[string, *domain.ActionParameter]
	servers       *loader.Loader[string, *domain.McpServer]
	tools         *loader.Loader[string, *domain.Tool]
	toolParams    *loader.Loader[string, *domain.ToolParameter]
	maps          *loader.Loader[string, *domain.ActionToolMap]
	mappings      *loader.Loader[string, *domain.ActionToolMapping]
	paramMappings *loader.Loader[string, *domain.ActionToolParameterMapping]
	models        *loader.Loader[string, *domain.Model]
	sessions      *loader.Loader[string, *domain.TraceSession]
	examples      *loader.Loader[string, *domain.Example]
	coverage      *loader.Loader[string, *domain.Coverage]
	all           []app.Clearer
}

type catalogLoadersKey struct{}

func newCatalogLoaders(s *Service, w loader.Timing) *catalogLoaders {
	q := &s.db.Q
	c := &catalogLoaders{}
	c.suites = loader.New(w, app.ByID(q.Catalog.SuitesByIDs, func(v *domain.Suite) string { return v.ID }))
	c.actions = loader.New(w, app.ByID(q.Catalog.ActionsByIDs, func(v *domain.Action) string { return v.ID }))
	c.actionParams = loader.New(w, app.ByID(q.Catalog.ActionParametersByIDs, func(v *domain.ActionParameter) string { return v.ID }))
	c.servers = loader.New(w, app.ByID(q.Catalog.McpServersByIDs, func(v *domain.McpServer) string { return v.ID }))
	c.tools = loader.New(w, app.ByID(q.Catalog.ToolsByIDs, func(v *domain.Tool) string { return v.ID }))
	c.toolParams = loader.New(w, app.ByID(q.Catalog.ToolParametersByIDs, func(v *domain.ToolParameter) string { return v.ID }))
	c.maps = loader.New(w, app.ByID(q.Catalog.ActionToolMapsByIDs, func(v *domain.ActionToolMap) string { return v.ID }))
	c.mappings = loader.New(w, app.ByID(q.Catalog.MappingsByIDs, func(v *domain.ActionToolMapping) string { return v.ID }))
	c.paramMappings = loader.New(w, app.ByID(q.Catalog.ParameterMappingsByIDs, func(v *domain.ActionToolParameterMapping) string { return v.ID }))
	c.models = loader.New(w, app.ByID(q.Examples.ModelsByIDs, func(v *domain.Model) string { return v.ID }))
	c.sessions = loader.New(w, app.ByID(q.Examples.TraceSessionsByIDs, func(v *domain.TraceSession) string { return v.ID }))
	c.examples = loader.New(w, app.ByID(q.Examples.ExamplesByIDs, func(v *domain.Example) string { return v.ID }))
	c.coverage = loader.New(w, q.Catalog.Coverages)
	c.all = []app.Clearer{c.suites, c.actions, c.actionParams, c.servers, c.tools, c.toolParams, c.maps, c.mappings,
		c.paramMappings, c.models, c.sessions, c.examples, c.coverage}
	return c
}

// Clear forgets every cached catalog read.
func (c *catalogLoaders) Clear() {
	for _, l := range c.all {
		l.Clear()
	}
}

// cat returns the request's catalog loaders.
func (s *Service) cat(ctx context.Context) *catalogLoaders {
	return app.Set(ctx, catalogLoadersKey{}, func(w loader.Timing) *catalogLoaders { return newCatalogLoaders(s, w) })
}

// asNode turns a loaded entity into a Node, nil (not a typed nil) when absent.
func asNode[T any, P interface {
	*T
	domain.Node
}](v P, err error) (domain.Node, error) {
	if err != nil || v == nil {
		return nil, err
	}
	return v, nil
}

// NodeOf loads a catalog entity by kind (an app.NodeSource): the catalog is
// global, visible to every caller; ok is false for other kinds.
// Catalog entities are global: every authenticated caller may read them.
func (s *Service) NodeOf(ctx context.Context, _ *auth.Principal, kind domain.Kind, id string) (node domain.Node, ok bool, err error) {
	if !catalogKinds[kind] {
		return nil, false, nil
	}
	c := s.cat(ctx)
	switch kind {
	case domain.KindSuite:
		node, err = asNode(c.suites.Load(ctx, id))
	case domain.KindAction:
		node, err = asNode(c.actions.Load(ctx, id))
	case domain.KindActionParameter:
		node, err = asNode(c.actionParams.Load(ctx, id))
	case domain.KindMcpServer:
		node, err = asNode(c.servers.Load(ctx, id))
	case domain.KindTool:
		node, err = asNode(c.tools.Load(ctx, id))
	case domain.KindToolParameter:
		node, err = asNode(c.toolParams.Load(ctx, id))
	case domain.KindActionToolMap:
		node, err = asNode(c.maps.Load(ctx, id))
	case domain.KindMapping:
		node, err = asNode(c.mappings.Load(ctx, id))
	case domain.KindParameterMapping:
		node, err = asNode(c.paramMappings.Load(ctx, id))
	case domain.KindModel:
		node, err = asNode(c.models.Load(ctx, id))
	case domain.KindTraceSession:
		node, err = asNode(c.sessions.Load(ctx, id))
	case domain.KindExample:
		node, err = asNode(c.examples.Load(ctx, id))
	}
	return node, true, err
}

var catalogKinds = map[domain.Kind]bool{
	domain.KindSuite: true, domain.KindAction: true, domain.KindActionParameter: true, domain.KindMcpServer: true,
	domain.KindTool: true, domain.KindToolParameter: true, domain.KindActionToolMap: true, domain.KindMapping: true,
	domain.KindParameterMapping: true, domain.KindModel: true, domain.KindTraceSession: true, domain.KindExample: true,
}

// entity loads the entity named by a global id given in input field `field`:
// BAD_USER_INPUT when malformed, NOT_FOUND (naming the field) when absent or
// of another kind.
func entity[T any](ctx context.Context, l *loader.Loader[string, *T], kind domain.Kind, gid, field, what string) (*T, error) {
	id, err := domain.DecodeID(kind, gid, field)
	if err != nil {
		if e, ok := domain.AsError(err); ok && e.Code == domain.CodeNotFound {
			return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: what + " not found"}
		}
		return nil, err
	}
	v, err := l.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, &domain.Error{Code: domain.CodeNotFound, Field: field, Message: what + " not found"}
	}
	return v, nil
}

// Nested reads of the catalog: resolvers of related fields call these; the
// entry point already checked the caller.

// SuiteByID loads a suite for nested fields.
func (s *Service) SuiteByID(ctx context.Context, id string) (*domain.Suite, error) {
	return s.cat(ctx).suites.Load(ctx, id)
}

// ActionByID loads an action for nested fields.
func (s *Service) ActionByID(ctx context.Context, id string) (*domain.Action, error) {
	return s.cat(ctx).actions.Load(ctx, id)
}

// ActionParameterByID loads an action parameter for nested fields.
func (s *Service) ActionParameterByID(ctx context.Context, id string) (*domain.ActionParameter, error) {
	return s.cat(ctx).actionParams.Load(ctx, id)
}

// McpServerByID loads a server for nested fields.
func (s *Service) McpServerByID(ctx context.Context, id string) (*domain.McpServer, error) {
	return s.cat(ctx).servers.Load(ctx, id)
}

// ToolByID loads a tool for nested fields.
func (s *Service) ToolByID(ctx context.Context, id string) (*domain.Tool, error) {
	return s.cat(ctx).tools.Load(ctx, id)
}

// ToolParameterByID loads a tool parameter for nested fields.
func (s *Service) ToolParameterByID(ctx context.Context, id string) (*domain.ToolParameter, error) {
	return s.cat(ctx).toolParams.Load(ctx, id)
}

// ActionToolMapByID loads a map for nested fields.
func (s *Service) ActionToolMapByID(ctx context.Context, id string) (*domain.ActionToolMap, error) {
	return s.cat(ctx).maps.Load(ctx, id)
}

// MappingByID loads a mapping for nested fields.
func (s *Service) MappingByID(ctx context.Context, id string) (*domain.ActionToolMapping, error) {
	return s.cat(ctx).mappings.Load(ctx, id)
}

// ModelByID loads a model for nested fields.
func (s *Service) ModelByID(ctx context.Context, id string) (*domain.Model, error) {
	return s.cat(ctx).models.Load(ctx, id)
}

// TraceSessionByID loads a session for nested fields.
func (s *Service) TraceSessionByID(ctx context.Context, id string) (*domain.TraceSession, error) {
	return s.cat(ctx).sessions.Load(ctx, id)
}

// Coverage is what a map leaves open, batched across maps.
func (s *Service) Coverage(ctx context.Context, mapID string) (*domain.Coverage, error) {
	c, err := s.cat(ctx).coverage.Load(ctx, mapID)
	if c == nil && err == nil {
		c = &domain.Coverage{}
	}
	return c, err
}

// childPage pages the children of one parent through the field's batched loader.
func childPage[T any](ctx context.Context, s *Service, field string, page domain.PageArgs, parent string,
	fetch func(store.CatalogQueries, context.Context, []string, domain.PageArgs) (map[string]domain.Page[T], error),
	count func(store.CatalogQueries, context.Context, []string) (map[string]int, error),
) (domain.Page[T], error) {
	return app.NestedPage(ctx, s.db, field, page, parent,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[T], error) {
			return fetch(q.Catalog, ctx, parents, page)
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return count(q.Catalog, ctx, parents)
		})
}

// ActionsOfSuite pages a suite's actions by name.
func (s *Service) ActionsOfSuite(ctx context.Context, suiteID string, page domain.PageArgs) (domain.Page[*domain.Action], error) {
	return childPage(ctx, s, "Suite.actions", page, suiteID, store.CatalogQueries.ActionsBySuites, store.CatalogQueries.CountActionsBySuites)
}

// ActionToolMapsOfSuite pages a suite's maps.
func (s *Service) ActionToolMapsOfSuite(ctx context.Context, suiteID string, page domain.PageArgs) (domain.Page[*domain.ActionToolMap], error) {
	return childPage(ctx, s, "Suite.actionToolMaps", page, suiteID, store.CatalogQueries.ActionToolMapsBySuites, store.CatalogQueries.CountActionToolMapsBySuites)
}

// TraceSessionsOfSuite pages a suite's trace sessions.
func (s *Service) TraceSessionsOfSuite(ctx context.Context, suiteID string, page domain.PageArgs) (domain.Page[*domain.TraceSession], error) {
	return app.NestedPage(ctx, s.db, "Suite.traceSessions", page, suiteID,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.TraceSession], error) {
			return q.Examples.TraceSessionsBySuites(ctx, parents, page)
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Examples.CountTraceSessionsBySuites(ctx, parents)
		})
}

// ParametersOfAction pages an action's parameters in declared order.
func (s *Service) ParametersOfAction(ctx context.Context, actionID string, page domain.PageArgs) (domain.Page[*domain.ActionParameter], error) {
	return childPage(ctx, s, "Action.parameters", page, actionID, store.CatalogQueries.ActionParametersByActions, store.CatalogQueries.CountActionParametersByActions)
}

// ToolsOfServer pages a server's tools by name.
func (s *Service) ToolsOfServer(ctx context.Context, serverID string, page domain.PageArgs) (domain.Page[*domain.Tool], error) {
	return childPage(ctx, s, "McpServer.tools", page, serverID, store.CatalogQueries.ToolsByServers, store.CatalogQueries.CountToolsByServers)
}

// ActionToolMapsOfServer pages the maps onto a server.
func (s *Service) ActionToolMapsOfServer(ctx context.Context, serverID string, page domain.PageArgs) (domain.Page[*domain.ActionToolMap], error) {
	return childPage(ctx, s, "McpServer.actionToolMaps", page, serverID, store.CatalogQueries.ActionToolMapsByServers, store.CatalogQueries.CountActionToolMapsByServers)
}

// ParametersOfTool pages a tool's parameters in schema order.
func (s *Service) ParametersOfTool(ctx context.Context, toolID string, page domain.PageArgs) (domain.Page[*domain.ToolParameter], error) {
	return childPage(ctx, s, "Tool.parameters", page, toolID, store.CatalogQueries.ToolParametersByTools, store.CatalogQueries.CountToolParametersByTools)
}

// MappingsOfMap pages a map's mappings.
func (s *Service) MappingsOfMap(ctx context.Context, mapID string, page domain.PageArgs) (domain.Page[*domain.ActionToolMapping], error) {
	return childPage(ctx, s, "ActionToolMap.toolMappings", page, mapID, store.CatalogQueries.MappingsByMaps, store.CatalogQueries.CountMappingsByMaps)
}

// ParameterMappingsOfMapping pages a mapping's parameter mappings.
func (s *Service) ParameterMappingsOfMapping(ctx context.Context, mappingID string, page domain.PageArgs) (domain.Page[*domain.ActionToolParameterMapping], error) {
	return childPage(ctx, s, "ActionToolMapping.parameterMappings", page, mappingID, store.CatalogQueries.ParameterMappingsByMappings, store.CatalogQueries.CountParameterMappingsByMappings)
}

// examplesBy pages examples per parent column.
func (s *Service) examplesBy(ctx context.Context, field, col, parent string, page domain.PageArgs) (domain.Page[*domain.Example], error) {
	return app.NestedPage(ctx, s.db, field, page, parent,
		func(ctx context.Context, q *store.Q, parents []string) (map[string]domain.Page[*domain.Example], error) {
			return q.Examples.ExamplesByParents(ctx, col, parents, page)
		},
		func(ctx context.Context, q *store.Q, parents []string) (map[string]int, error) {
			return q.Examples.CountExamplesByParents(ctx, col, parents)
		})
}

// ExamplesOfMap pages the examples built with a map.
func (s *Service) ExamplesOfMap(ctx context.Context, mapID string, page domain.PageArgs) (domain.Page[*domain.Example], error) {
	return s.examplesBy(ctx, "ActionToolMap.examples", "e.action_tool_map_id", mapID, page)
}

// ExamplesOfModel pages the examples of a model.
func (s *Service) ExamplesOfModel(ctx context.Context, modelID string, page domain.PageArgs) (domain.Page[*domain.Example], error) {
	return s.examplesBy(ctx, "Model.examples", "e.model_id", modelID, page)
}

// ExamplesOfSession pages the examples derived from a session.
func (s *Service) ExamplesOfSession(ctx context.Context, sessionID string, page domain.PageArgs) (domain.Page[*domain.Example], error) {
	return s.examplesBy(ctx, "TraceSession.examples", "e.session_id", sessionID, page)
}
