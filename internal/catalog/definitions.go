package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// The catalog is global: every authenticated caller reads it; ADMIN and MEMBER
// tokens change it; AGENT tokens only read it.

// catalogWriter returns the caller when it may change the catalog.
func catalogWriter(ctx context.Context) (*auth.Principal, error) {
	p, err := app.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if p.Role == domain.RoleAgent {
		return nil, domain.Forbidden("agent tokens may read the catalog but not change it")
	}
	return p, nil
}

// Limits of catalog inputs.
const (
	maxParameters = 200
	maxTools      = 1000
)

func conflict(field, format string, args ...any) error {
	return &domain.Error{Code: domain.CodeConflict, Field: field, Message: fmt.Sprintf(format, args...)}
}

// checkName validates the name of a catalog entity.
func checkName(field, name string) (string, error) {
	return domain.CheckText(field, name, domain.MaxCatalogName, true)
}

// checkParameters validates declared parameters: names 1-200 characters and
// unique (CONFLICT naming the second one), known types.
func checkParameters(in []*domain.ParameterInput) ([]*domain.ParameterInput, error) {
	if len(in) > maxParameters {
		return nil, domain.InputError("parameters", "at most %d parameters", maxParameters)
	}
	out := make([]*domain.ParameterInput, len(in))
	seen := map[string]int{}
	for i, p := range in {
		field := fmt.Sprintf("parameters[%d].name", i)
		name, err := checkName(field, p.Name)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[name]; dup {
			return nil, conflict(field, "parameter %q is declared twice (parameters[%d] and [%d]); names are unique within their action or tool", name, prev, i)
		}
		seen[name] = i
		if !p.Type.Valid() {
			return nil, domain.InputError(fmt.Sprintf("parameters[%d].type", i), "unknown parameter type %q", p.Type)
		}
		desc, err := domain.CheckText(fmt.Sprintf("parameters[%d].description", i), deref(p.Description), domain.MaxDescription, false)
		if err != nil {
			return nil, err
		}
		out[i] = &domain.ParameterInput{Name: name, Type: p.Type, Required: p.Required, Description: &desc}
	}
	return out, nil
}

// checkCallable validates what actions and tools both have: a name, an
// optional description and parameters.
func checkCallable(name string, description *string, params []*domain.ParameterInput) (string, string, []*domain.ParameterInput, error) {
	name, err := checkName("name", name)
	if err != nil {
		return "", "", nil, err
	}
	desc, err := domain.CheckText("description", deref(description), domain.MaxDescription, false)
	if err != nil {
		return "", "", nil, err
	}
	checked, err := checkParameters(params)
	return name, desc, checked, err
}

// CreateSuite creates a suite; names are unique.
func (s *Service) CreateSuite(ctx context.Context, in domain.CreateSuiteInput) (*domain.Suite, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return nil, err
	}
	name, err := checkName("name", in.Name)
	if err != nil {
		return nil, err
	}
	now := s.now()
	suite := &domain.Suite{ID: app.NewID(), Name: name, CreatedAt: now, UpdatedAt: now}
	err = s.tx(ctx, func(tx *app.Tx) error { return tx.Catalog.InsertSuite(ctx, suite) })
	if errors.Is(err, store.ErrUnique) {
		return nil, conflict("name", "a suite named %q exists", name)
	}
	return suite, err
}

// Suites pages every suite by name.
func (s *Service) Suites(ctx context.Context, page domain.PageArgs) (domain.Page[*domain.Suite], error) {
	if _, err := app.Caller(ctx); err != nil {
		return domain.Page[*domain.Suite]{}, err
	}
	return s.db.Catalog.Suites(ctx, page)
}

// CreateAction creates an action of a suite with its parameters; action names
// are unique within their suite.
func (s *Service) CreateAction(ctx context.Context, in domain.CreateActionInput) (*domain.Action, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return nil, err
	}
	suite, err := entity(ctx, s.cat(ctx).suites, domain.KindSuite, in.SuiteID, "suiteId", "suite")
	if err != nil {
		return nil, err
	}
	name, desc, params, err := checkCallable(in.Name, in.Description, in.Parameters)
	if err != nil {
		return nil, err
	}
	now := s.now()
	a := &domain.Action{ID: app.NewID(), SuiteID: suite.ID, Name: name, Description: desc, CreatedAt: now, UpdatedAt: now}
	rows := make([]*domain.ActionParameter, len(params))
	for i, p := range params {
		rows[i] = &domain.ActionParameter{ID: app.NewID(), ActionID: a.ID, Name: p.Name, Type: p.Type,
			Required: deref(p.Required), Description: deref(p.Description), Position: i, CreatedAt: now}
	}
	err = s.tx(ctx, func(tx *app.Tx) error {
		if err := tx.Catalog.InsertAction(ctx, a); err != nil {
			return err
		}
		return tx.Catalog.InsertActionParameters(ctx, rows)
	})
	if errors.Is(err, store.ErrUnique) {
		return nil, conflict("name", "suite %q already has an action named %q", suite.Name, name)
	}
	return a, err
}

// CreateMcpServer creates an MCP server; names are unique.
func (s *Service) CreateMcpServer(ctx context.Context, in domain.CreateMcpServerInput) (*domain.McpServer, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return nil, err
	}
	name, err := checkName("name", in.Name)
	if err != nil {
		return nil, err
	}
	now := s.now()
	m := &domain.McpServer{ID: app.NewID(), Name: name, CreatedAt: now, UpdatedAt: now}
	err = s.tx(ctx, func(tx *app.Tx) error { return tx.Catalog.InsertMcpServer(ctx, m) })
	if errors.Is(err, store.ErrUnique) {
		return nil, conflict("name", "an MCP server named %q exists", name)
	}
	return m, err
}

// McpServers pages every MCP server by name.
func (s *Service) McpServers(ctx context.Context, page domain.PageArgs) (domain.Page[*domain.McpServer], error) {
	if _, err := app.Caller(ctx); err != nil {
		return domain.Page[*domain.McpServer]{}, err
	}
	return s.db.Catalog.McpServers(ctx, page)
}

// CreateTool creates a tool of a server with its parameters; tool names are
// unique within their server.
func (s *Service) CreateTool(ctx context.Context, in domain.CreateToolInput) (*domain.Tool, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return nil, err
	}
	server, err := entity(ctx, s.cat(ctx).servers, domain.KindMcpServer, in.McpServerID, "mcpServerId", "MCP server")
	if err != nil {
		return nil, err
	}
	name, desc, params, err := checkCallable(in.Name, in.Description, in.Parameters)
	if err != nil {
		return nil, err
	}
	now := s.now()
	t := &domain.Tool{ID: app.NewID(), McpServerID: server.ID, Name: name, Description: desc, CreatedAt: now, UpdatedAt: now}
	rows := make([]*domain.ToolParameter, len(params))
	for i, p := range params {
		rows[i] = &domain.ToolParameter{ID: app.NewID(), ToolID: t.ID, Name: p.Name, Type: p.Type,
			Required: deref(p.Required), Description: deref(p.Description), Position: i, CreatedAt: now}
	}
	err = s.tx(ctx, func(tx *app.Tx) error {
		if err := tx.Catalog.InsertTools(ctx, []*domain.Tool{t}); err != nil {
			return err
		}
		if err := tx.Catalog.InsertToolParameters(ctx, rows); err != nil {
			return err
		}
		return tx.Catalog.TouchMcpServer(ctx, server.ID, now)
	})
	if errors.Is(err, store.ErrUnique) {
		return nil, conflict("name", "MCP server %q already has a tool named %q", server.Name, name)
	}
	return t, err
}

// References that keep a catalog entity alive (ON DELETE RESTRICT). What is
// owned (an action's parameters, a map's mappings) goes with its owner.
var (
	suiteRefs = []store.RefSource{
		{Table: "action_tool_maps", Column: "suite_id", What: "action tool map"},
		{Table: "trace_sessions", Column: "suite_id", What: "trace session"},
	}
	actionRefs = []store.RefSource{{Table: "action_tool_mappings", Column: "action_id", What: "action tool mapping"}}
	serverRefs = []store.RefSource{{Table: "action_tool_maps", Column: "mcp_server_id", What: "action tool map"}}
	toolRefs   = []store.RefSource{{Table: "action_tool_mappings", Column: "tool_id", What: "action tool mapping"}}
	mapRefs    = []store.RefSource{{Table: "examples", Column: "action_tool_map_id", What: "example"}}
	modelRefs  = []store.RefSource{{Table: "examples", Column: "model_id", What: "example"}}
	// A session's examples are derived from its trace.
	sessionRefs = []store.RefSource{{Table: "examples", Column: "session_id", What: "example"}}
)

// stillUsed is the CONFLICT of deleting what something still refers to; it
// says by what, and how many, in the message and in extensions.references.
func stillUsed(what, name string, refs store.References) error {
	var (
		parts   []string
		details = map[string]any{}
	)
	for _, r := range refs {
		if r.N == 0 {
			continue
		}
		noun := r.What
		if r.N != 1 {
			noun += "s"
		}
		parts = append(parts, fmt.Sprintf("%d %s", r.N, noun))
		details[camelPlural(r.What)] = r.N
	}
	if len(parts) == 0 {
		return nil
	}
	list := strings.Join(parts, ", ")
	if i := strings.LastIndex(list, ", "); i >= 0 {
		list = list[:i] + " and " + list[i+2:]
	}
	subject := what
	if name != "" {
		subject = fmt.Sprintf("%s %q", what, name)
	}
	return &domain.Error{Code: domain.CodeConflict, Field: "id",
		Message: fmt.Sprintf("%s is still used by %s; delete or change those first", subject, list),
		Details: map[string]any{"references": details}}
}

// camelPlural turns "action tool map" into "actionToolMaps".
func camelPlural(what string) string {
	words := strings.Fields(what)
	for i := 1; i < len(words); i++ {
		words[i] = strings.ToUpper(words[i][:1]) + words[i][1:]
	}
	return strings.Join(words, "") + "s"
}

// deleteUnused deletes an entity in one transaction after checking that
// nothing refers to it.
func (s *Service) deleteUnused(ctx context.Context, what, name, id string, refs []store.RefSource, del func(tx *app.Tx) error) error {
	return s.tx(ctx, func(tx *app.Tx) error {
		counts, err := tx.Catalog.CountReferences(ctx, id, refs...)
		if err != nil {
			return err
		}
		if err := stillUsed(what, name, counts); err != nil {
			return err
		}
		if err := del(tx); errors.Is(err, store.ErrForeignKey) {
			// Something came to refer to it since the count.
			return &domain.Error{Code: domain.CodeConflict, Field: "id", Message: fmt.Sprintf("%s is still in use", what)}
		} else if err != nil {
			return err
		}
		return nil
	})
}

// DeleteSuite deletes a suite with its actions; CONFLICT while a map or a
// trace session refers to it.
func (s *Service) DeleteSuite(ctx context.Context, gid string) (string, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return "", err
	}
	v, err := entity(ctx, s.cat(ctx).suites, domain.KindSuite, gid, "id", "suite")
	if err != nil {
		return "", err
	}
	return v.GlobalID(), s.deleteUnused(ctx, "suite", v.Name, v.ID, suiteRefs, func(tx *app.Tx) error { return tx.Catalog.DeleteSuite(ctx, v.ID) })
}

// DeleteAction deletes an action with its parameters; CONFLICT while a map maps it.
func (s *Service) DeleteAction(ctx context.Context, gid string) (string, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return "", err
	}
	v, err := entity(ctx, s.cat(ctx).actions, domain.KindAction, gid, "id", "action")
	if err != nil {
		return "", err
	}
	return v.GlobalID(), s.deleteUnused(ctx, "action", v.Name, v.ID, actionRefs, func(tx *app.Tx) error { return tx.Catalog.DeleteAction(ctx, v.ID) })
}

// DeleteMcpServer deletes a server with its tools; CONFLICT while a map refers to it.
func (s *Service) DeleteMcpServer(ctx context.Context, gid string) (string, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return "", err
	}
	v, err := entity(ctx, s.cat(ctx).servers, domain.KindMcpServer, gid, "id", "MCP server")
	if err != nil {
		return "", err
	}
	return v.GlobalID(), s.deleteUnused(ctx, "MCP server", v.Name, v.ID, serverRefs, func(tx *app.Tx) error { return tx.Catalog.DeleteMcpServer(ctx, v.ID) })
}

// DeleteTool deletes a tool with its parameters; CONFLICT while a map maps it.
func (s *Service) DeleteTool(ctx context.Context, gid string) (string, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return "", err
	}
	v, err := entity(ctx, s.cat(ctx).tools, domain.KindTool, gid, "id", "tool")
	if err != nil {
		return "", err
	}
	return v.GlobalID(), s.deleteUnused(ctx, "tool", v.Name, v.ID, toolRefs, func(tx *app.Tx) error {
		if err := tx.Catalog.DeleteTool(ctx, v.ID); err != nil {
			return err
		}
		return tx.Catalog.TouchMcpServer(ctx, v.McpServerID, s.now())
	})
}
