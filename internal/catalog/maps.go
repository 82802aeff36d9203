package catalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/store"
)

// Action tool maps: a suite bound to an MCP server, action by action and
// parameter by parameter. Every change to a map's mappings raises its version
// by one, in the same transaction, under the map's row lock.

// CreateActionToolMap binds a suite to an MCP server (version 1, no mappings).
// A suite may have several maps, onto the same server or others.
func (s *Service) CreateActionToolMap(ctx context.Context, in domain.CreateActionToolMapInput) (*domain.ActionToolMap, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return nil, err
	}
	c := s.cat(ctx)
	suite, err := entity(ctx, c.suites, domain.KindSuite, in.SuiteID, "suiteId", "suite")
	if err != nil {
		return nil, err
	}
	server, err := entity(ctx, c.servers, domain.KindMcpServer, in.McpServerID, "mcpServerId", "MCP server")
	if err != nil {
		return nil, err
	}
	now := s.now()
	m := &domain.ActionToolMap{ID: app.NewID(), SuiteID: suite.ID, McpServerID: server.ID, Version: 1, CreatedAt: now, UpdatedAt: now}
	if err := s.tx(ctx, func(tx *app.Tx) error { return tx.Catalog.InsertActionToolMap(ctx, m) }); err != nil {
		return nil, err
	}
	return m, nil
}

// AddActionToolMapping maps an action of the map's suite to a tool of its
// server; a map maps each action at most once. It returns the mapping and the
// map at its new version.
func (s *Service) AddActionToolMapping(ctx context.Context, in domain.AddActionToolMappingInput) (*domain.ActionToolMapping, *domain.ActionToolMap, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return nil, nil, err
	}
	c := s.cat(ctx)
	m, err := entity(ctx, c.maps, domain.KindActionToolMap, in.ActionToolMapID, "actionToolMapId", "action tool map")
	if err != nil {
		return nil, nil, err
	}
	action, err := entity(ctx, c.actions, domain.KindAction, in.ActionID, "actionId", "action")
	if err != nil {
		return nil, nil, err
	}
	tool, err := entity(ctx, c.tools, domain.KindTool, in.ToolID, "toolId", "tool")
	if err != nil {
		return nil, nil, err
	}
	if action.SuiteID != m.SuiteID {
		suite, err := c.suites.Get(ctx, m.SuiteID)
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, domain.InputError("actionId", "action %q belongs to another suite; this map binds the actions of suite %q",
			action.Name, suite.Name)
	}
	if tool.McpServerID != m.McpServerID {
		server, err := c.servers.Get(ctx, m.McpServerID)
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, domain.InputError("toolId", "tool %q belongs to another MCP server; this map binds the tools of %q",
			tool.Name, server.Name)
	}
	now := s.now()
	mapping := &domain.ActionToolMapping{ID: app.NewID(), ActionToolMapID: m.ID, ActionID: action.ID, ToolID: tool.ID, CreatedAt: now}
	var out *domain.ActionToolMap
	err = s.tx(ctx, func(tx *app.Tx) error {
		if _, err := tx.Catalog.ActionToolMapForUpdate(ctx, m.ID); err != nil {
			return app.NotFound(err, "action tool map")
		}
		if err := tx.Catalog.InsertMapping(ctx, mapping); errors.Is(err, store.ErrUnique) {
			return conflict("actionId", "the map already maps action %q; remove that mapping first to map it to another tool", action.Name)
		} else if err != nil {
			return err
		}
		out, err = bump(ctx, tx, m.ID, now)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return mapping, out, nil
}

// bump raises a map's version after a change to its mappings and returns it.
func bump(ctx context.Context, tx *app.Tx, mapID string, now time.Time) (*domain.ActionToolMap, error) {
	if err := tx.Catalog.BumpActionToolMap(ctx, mapID, now); err != nil {
		return nil, err
	}
	return tx.Catalog.ActionToolMapForUpdate(ctx, mapID)
}

// AddParameterMapping feeds a parameter of the mapping's tool from a parameter
// of its action. The types must fit (domain.ParameterType.Feeds); each tool
// parameter is fed at most once per mapping.
func (s *Service) AddParameterMapping(ctx context.Context, in domain.AddParameterMappingInput) (*domain.ActionToolParameterMapping, *domain.ActionToolMap, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return nil, nil, err
	}
	c := s.cat(ctx)
	mapping, err := entity(ctx, c.mappings, domain.KindMapping, in.MappingID, "mappingId", "action tool mapping")
	if err != nil {
		return nil, nil, err
	}
	ap, err := entity(ctx, c.actionParams, domain.KindActionParameter, in.ActionParameterID, "actionParameterId", "action parameter")
	if err != nil {
		return nil, nil, err
	}
	tp, err := entity(ctx, c.toolParams, domain.KindToolParameter, in.ToolParameterID, "toolParameterId", "tool parameter")
	if err != nil {
		return nil, nil, err
	}
	if ap.ActionID != mapping.ActionID {
		action, err := c.actions.Get(ctx, mapping.ActionID)
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, domain.InputError("actionParameterId", "%q is not a parameter of action %q, which this mapping maps", ap.Name, action.Name)
	}
	if tp.ToolID != mapping.ToolID {
		tool, err := c.tools.Get(ctx, mapping.ToolID)
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, domain.InputError("toolParameterId", "%q is not a parameter of tool %q, which this mapping maps to", tp.Name, tool.Name)
	}
	if !ap.Type.Feeds(tp.Type) {
		return nil, nil, &domain.Error{Code: domain.CodeBadUserInput, Field: "toolParameterId",
			Message: fmt.Sprintf("action parameter %q (%s) cannot feed tool parameter %q (%s): the types must be equal, except that an INTEGER may feed a NUMBER",
				ap.Name, ap.Type, tp.Name, tp.Type),
			Details: map[string]any{"actionParameterType": string(ap.Type), "toolParameterType": string(tp.Type)}}
	}
	now := s.now()
	pm := &domain.ActionToolParameterMapping{ID: app.NewID(), ActionToolMappingID: mapping.ID, ActionParameterID: ap.ID,
		ToolParameterID: tp.ID, CreatedAt: now}
	var out *domain.ActionToolMap
	err = s.tx(ctx, func(tx *app.Tx) error {
		if _, err := tx.Catalog.ActionToolMapForUpdate(ctx, mapping.ActionToolMapID); err != nil {
			return app.NotFound(err, "action tool map")
		}
		if err := tx.Catalog.InsertParameterMapping(ctx, pm); errors.Is(err, store.ErrUnique) {
			return conflict("toolParameterId", "tool parameter %q is already fed in this mapping; remove that parameter mapping first", tp.Name)
		} else if errors.Is(err, store.ErrForeignKey) {
			return domain.NotFound("action tool mapping") // removed since it was read
		} else if err != nil {
			return err
		}
		out, err = bump(ctx, tx, mapping.ActionToolMapID, now)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return pm, out, nil
}

// RemoveActionToolMapping removes a mapping with its parameter mappings and
// returns the map at its new version.
func (s *Service) RemoveActionToolMapping(ctx context.Context, gid string) (string, *domain.ActionToolMap, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return "", nil, err
	}
	mapping, err := entity(ctx, s.cat(ctx).mappings, domain.KindMapping, gid, "id", "action tool mapping")
	if err != nil {
		return "", nil, err
	}
	var out *domain.ActionToolMap
	err = s.tx(ctx, func(tx *app.Tx) error {
		if _, err := tx.Catalog.ActionToolMapForUpdate(ctx, mapping.ActionToolMapID); err != nil {
			return app.NotFound(err, "action tool map")
		}
		if err := tx.Catalog.DeleteMapping(ctx, mapping.ID); err != nil {
			return err
		}
		out, err = bump(ctx, tx, mapping.ActionToolMapID, s.now())
		return err
	})
	if err != nil {
		return "", nil, err
	}
	return mapping.GlobalID(), out, nil
}

// RemoveParameterMapping removes a parameter mapping and returns the map at its
// new version.
func (s *Service) RemoveParameterMapping(ctx context.Context, gid string) (string, *domain.ActionToolMap, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return "", nil, err
	}
	c := s.cat(ctx)
	pm, err := entity(ctx, c.paramMappings, domain.KindParameterMapping, gid, "id", "parameter mapping")
	if err != nil {
		return "", nil, err
	}
	mapping, err := c.mappings.Get(ctx, pm.ActionToolMappingID)
	if err != nil {
		return "", nil, err
	}
	if mapping == nil {
		return "", nil, &domain.Error{Code: domain.CodeNotFound, Field: "id", Message: "parameter mapping not found"}
	}
	var out *domain.ActionToolMap
	err = s.tx(ctx, func(tx *app.Tx) error {
		if _, err := tx.Catalog.ActionToolMapForUpdate(ctx, mapping.ActionToolMapID); err != nil {
			return app.NotFound(err, "action tool map")
		}
		if err := tx.Catalog.DeleteParameterMapping(ctx, pm.ID); err != nil {
			return err
		}
		out, err = bump(ctx, tx, mapping.ActionToolMapID, s.now())
		return err
	})
	if err != nil {
		return "", nil, err
	}
	return pm.GlobalID(), out, nil
}

// DeleteActionToolMap deletes a map with its mappings; CONFLICT while examples
// built with it exist.
func (s *Service) DeleteActionToolMap(ctx context.Context, gid string) (string, error) {
	if _, err := catalogWriter(ctx); err != nil {
		return "", err
	}
	m, err := entity(ctx, s.cat(ctx).maps, domain.KindActionToolMap, gid, "id", "action tool map")
	if err != nil {
		return "", err
	}
	return m.GlobalID(), s.deleteUnused(ctx, "action tool map", "", m.ID, mapRefs, func(tx *app.Tx) error {
		return tx.Catalog.DeleteActionToolMap(ctx, m.ID)
	})
}
