package catalog

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// ImportResult says what an import did with each tool of the document.
type ImportResult struct {
	Created   []*domain.Tool
	Updated   []*domain.Tool
	Unchanged []*domain.Tool
}

// ImportMcpTools creates or updates the tools of a server from an MCP
// tools/list result (domain.ParseMCPTools), in one transaction: a tool of the
// document that the server lacks is created; one it has is updated when its
// description, schema or parameters differ, and left alone otherwise. Tools of
// the server that the document does not list are kept (deleteTool removes
// them). A parameter that an update would drop or retype is refused with
// CONFLICT while parameter mappings use it in a way that would no longer hold.
// Invalid JSON is BAD_USER_INPUT with its line and column; then nothing changes.
func (s *Service) ImportMcpTools(ctx context.Context, in domain.ImportMcpToolsInput) (*ImportResult, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return nil, err
	}
	server, err := entity(ctx, s.cat(ctx).servers, domain.KindMcpServer, in.McpServerID, "mcpServerId", "MCP server")
	if err != nil {
		return nil, err
	}
	tools, err := domain.ParseMCPTools("toolsJson", []byte(in.ToolsJSON))
	if err != nil {
		return nil, err
	}
	if len(tools) > maxTools {
		return nil, domain.InputError("toolsJson", "at most %d tools per import", maxTools)
	}
	for i, t := range tools {
		if len(t.Parameters) > maxParameters {
			return nil, domain.InputError("toolsJson", "tools[%d] (%s) has more than %d parameters", i, t.Name, maxParameters)
		}
	}
	var res *ImportResult
	err = s.tx(ctx, func(tx *app.Tx) error {
		res, err = s.importTools(ctx, tx, server, tools)
		return err
	})
	return res, err
}

func (s *Service) importTools(ctx context.Context, tx *app.Tx, server *domain.McpServer, doc []domain.MCPTool) (*ImportResult, error) {
	// Imports into one server run one at a time (PostgreSQL row lock; SQLite's
	// single writer), so the tools read here stay as read.
	if _, err := tx.Catalog.McpServerForUpdate(ctx, server.ID); err != nil {
		return nil, app.NotFound(err, "MCP server")
	}
	existing, err := tx.Catalog.ToolsOfServer(ctx, server.ID)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*domain.Tool, len(existing))
	ids := make([]string, len(existing))
	for i, t := range existing {
		byName[t.Name], ids[i] = t, t.ID
	}
	params, err := tx.Catalog.ToolParametersOfTools(ctx, ids)
	if err != nil {
		return nil, err
	}
	paramsOf := map[string][]*domain.ToolParameter{}
	for _, p := range params {
		paramsOf[p.ToolID] = append(paramsOf[p.ToolID], p)
	}

	now := s.now()
	res := &ImportResult{Created: []*domain.Tool{}, Updated: []*domain.Tool{}, Unchanged: []*domain.Tool{}}
	var (
		newTools    []*domain.Tool
		newParams   []*domain.ToolParameter
		dropped     []*domain.ToolParameter
		updatedIDs  []string
		paramWrites []*domain.ToolParameter
		toolWrites  []*domain.Tool
	)
	for _, dt := range doc {
		cur := byName[dt.Name]
		if cur == nil {
			t := &domain.Tool{ID: app.NewID(), McpServerID: server.ID, Name: dt.Name, Description: dt.Description,
				InputSchema: dt.InputSchema, CreatedAt: now, UpdatedAt: now}
			newTools = append(newTools, t)
			for i, dp := range dt.Parameters {
				newParams = append(newParams, toolParameter(t.ID, i, dp, now))
			}
			res.Created = append(res.Created, t)
			continue
		}
		changed := cur.Description != dt.Description || !sameJSON(cur.InputSchema, dt.InputSchema)
		have := map[string]*domain.ToolParameter{}
		for _, p := range paramsOf[cur.ID] {
			have[p.Name] = p
		}
		for i, dp := range dt.Parameters {
			p := have[dp.Name]
			if p == nil {
				newParams = append(newParams, toolParameter(cur.ID, i, dp, now))
				changed = true
				continue
			}
			delete(have, dp.Name)
			if p.Type == dp.Type && p.Required == dp.Required && p.Description == dp.Description && p.Position == i &&
				sameJSON(p.JSONSchema, dp.Schema) {
				continue
			}
			p.Type, p.Required, p.Description, p.Position, p.JSONSchema = dp.Type, dp.Required, dp.Description, i, dp.Schema
			paramWrites = append(paramWrites, p)
			changed = true
		}
		for _, p := range paramsOf[cur.ID] {
			if have[p.Name] != nil {
				dropped = append(dropped, p)
				changed = true
			}
		}
		if !changed {
			res.Unchanged = append(res.Unchanged, cur)
			continue
		}
		cur.Description, cur.InputSchema, cur.UpdatedAt = dt.Description, dt.InputSchema, now
		toolWrites = append(toolWrites, cur)
		updatedIDs = append(updatedIDs, cur.ID)
		res.Updated = append(res.Updated, cur)
	}
	if err := checkDropped(ctx, tx, paramsByID(dropped), existing); err != nil {
		return nil, err
	}
	dropIDs := make([]string, len(dropped))
	for i, p := range dropped {
		dropIDs[i] = p.ID
	}
	if err := tx.Catalog.DeleteToolParameters(ctx, dropIDs); err != nil {
		return nil, err
	}
	for _, t := range toolWrites {
		if err := tx.Catalog.UpdateTool(ctx, t); err != nil {
			return nil, err
		}
	}
	for _, p := range paramWrites {
		if err := tx.Catalog.UpdateToolParameter(ctx, p); err != nil {
			return nil, err
		}
	}
	if err := tx.Catalog.InsertTools(ctx, newTools); err != nil {
		return nil, err
	}
	if err := tx.Catalog.InsertToolParameters(ctx, newParams); err != nil {
		return nil, err
	}
	if len(paramWrites) > 0 {
		feeds, err := tx.Catalog.FeedsIntoTools(ctx, updatedIDs)
		if err != nil {
			return nil, err
		}
		if i := slices.IndexFunc(feeds, func(f store.ParameterFeed) bool { return !f.ActionType.Feeds(f.ToolType) }); i >= 0 {
			b := feeds[i]
			return nil, &domain.Error{Code: domain.CodeConflict, Field: "toolsJson",
				Message: fmt.Sprintf("the import makes parameter %q of tool %q %s, but action parameter %q (%s) of action %q feeds it; "+
					"remove that parameter mapping first", b.ToolParameter, b.ToolName, b.ToolType, b.ActionParameter, b.ActionType, b.ActionName),
				Details: map[string]any{"tool": b.ToolName, "parameter": b.ToolParameter}}
		}
	}
	if len(newTools) > 0 || len(toolWrites) > 0 {
		if err := tx.Catalog.TouchMcpServer(ctx, server.ID, now); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// paramsByID indexes parameters by id.
func paramsByID(ps []*domain.ToolParameter) map[string]*domain.ToolParameter {
	out := make(map[string]*domain.ToolParameter, len(ps))
	for _, p := range ps {
		out[p.ID] = p
	}
	return out
}

// checkDropped refuses to drop parameters that parameter mappings use.
func checkDropped(ctx context.Context, tx *app.Tx, dropped map[string]*domain.ToolParameter, tools []*domain.Tool) error {
	if len(dropped) == 0 {
		return nil
	}
	ids := make([]string, 0, len(dropped))
	for id := range dropped {
		ids = append(ids, id)
	}
	used, err := tx.Catalog.ParameterMappingsOfToolParameters(ctx, ids)
	if err != nil {
		return err
	}
	toolName := map[string]string{}
	for _, t := range tools {
		toolName[t.ID] = t.Name
	}
	var names []string
	for id, n := range used {
		if n > 0 {
			p := dropped[id]
			names = append(names, fmt.Sprintf("%s.%s (%d parameter mapping%s)", toolName[p.ToolID], p.Name, n, plural(n)))
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return &domain.Error{Code: domain.CodeConflict, Field: "toolsJson",
		Message: "the import drops tool parameters that parameter mappings use: " + strings.Join(names, ", ") +
			"; remove those parameter mappings first"}
}

func toolParameter(toolID string, pos int, p domain.MCPParameter, now time.Time) *domain.ToolParameter {
	return &domain.ToolParameter{ID: app.NewID(), ToolID: toolID, Name: p.Name, Type: p.Type, Required: p.Required,
		Description: p.Description, Position: pos, JSONSchema: p.Schema, CreatedAt: now}
}

// sameJSON compares two JSON values by meaning (the database may reformat them).
func sameJSON(a, b domain.JSON) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	ca, err1 := domain.CanonicalJSON(a)
	cb, err2 := domain.CanonicalJSON(b)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
