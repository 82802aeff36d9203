package catalog_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// fixture is a suite with one action, a server with one tool, and a map
// binding them, created by the bundle's owner.
type fixture struct {
	suite  *domain.Suite
	action *domain.Action
	server *domain.McpServer
	tool   *domain.Tool
	m      *domain.ActionToolMap
}

func (b *bundle) catalog() fixture {
	b.t.Helper()
	ctx := as(b.owner)
	var c fixture
	var err error
	c.suite, err = b.svc.CreateSuite(ctx, domain.CreateSuiteInput{Name: "Suite"})
	require.NoError(b.t, err)
	c.action, err = b.svc.CreateAction(ctx, domain.CreateActionInput{SuiteID: c.suite.GlobalID(), Name: "act",
		Parameters: []*domain.ParameterInput{{Name: "n", Type: domain.ParamInteger}}})
	require.NoError(b.t, err)
	c.server, err = b.svc.CreateMcpServer(ctx, domain.CreateMcpServerInput{Name: "server"})
	require.NoError(b.t, err)
	res, err := b.svc.ImportMcpTools(ctx, domain.ImportMcpToolsInput{McpServerID: c.server.GlobalID(),
		ToolsJSON: `[{"name": "tool", "inputSchema": {"type": "object", "properties": {"n": {"type": "number"}, "s": {"type": "string"}}}}]`})
	require.NoError(b.t, err)
	c.tool = res.Created[0]
	c.m, err = b.svc.CreateActionToolMap(ctx, domain.CreateActionToolMapInput{SuiteID: c.suite.GlobalID(), McpServerID: c.server.GlobalID()})
	require.NoError(b.t, err)
	return c
}

func TestImportRollsBack(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		c := b.catalog()
		ctx := as(b.owner)
		mapping, _, err := b.svc.AddActionToolMapping(ctx, domain.AddActionToolMappingInput{ActionToolMapID: c.m.GlobalID(),
			ActionID: c.action.GlobalID(), ToolID: c.tool.GlobalID()})
		require.NoError(t, err)
		aps, err := b.db.Catalog.ActionParametersByActions(context.Background(), []string{c.action.ID}, domain.PageArgs{})
		require.NoError(t, err)
		tps, err := b.db.Catalog.ToolParametersOfTools(context.Background(), []string{c.tool.ID})
		require.NoError(t, err)
		_, m, err := b.svc.AddParameterMapping(ctx, domain.AddParameterMappingInput{MappingID: mapping.GlobalID(),
			ActionParameterID: aps[c.action.ID].Items[0].GlobalID(), ToolParameterID: tps[0].GlobalID()})
		require.NoError(t, err)
		require.Equal(t, 3, m.Version)

		// A new tool and a retyped, mapped parameter in one document: the
		// CONFLICT undoes the new tool too.
		_, err = b.svc.ImportMcpTools(ctx, domain.ImportMcpToolsInput{McpServerID: c.server.GlobalID(), ToolsJSON: `[
			{"name": "fresh"},
			{"name": "tool", "inputSchema": {"type": "object", "properties": {"n": {"type": "string"}, "s": {"type": "string"}}}}]`})
		requireCode(t, err, domain.CodeConflict, "toolsJson")
		tools, err := b.db.Catalog.ToolsOfServer(context.Background(), c.server.ID)
		require.NoError(t, err)
		require.Len(t, tools, 1, "nothing of the refused import is kept")
		tps, err = b.db.Catalog.ToolParametersOfTools(context.Background(), []string{c.tool.ID})
		require.NoError(t, err)
		require.Equal(t, domain.ParamNumber, tps[0].Type)
	})
}

func TestCatalogRoles(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		c := b.catalog()
		_, err := b.svc.CreateSuite(as(b.agent), domain.CreateSuiteInput{Name: "agent"})
		requireCode(t, err, domain.CodeForbidden)
		_, err = b.svc.CreateSuite(context.Background(), domain.CreateSuiteInput{Name: "anon"})
		requireCode(t, err, domain.CodeUnauthenticated)
		for name, p := range map[string]*auth.Principal{"agent": b.agent, "other": b.other, "admin": b.admin} {
			n, err := b.node(as(p), c.m.GlobalID())
			require.NoError(t, err, name)
			require.NotNil(t, n, "%s reads the global catalog", name)
		}
	})
}

func TestClaimExampleConcurrently(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		c := b.catalog()
		ctx := as(b.owner)
		session, err := b.svc.CreateTraceSession(ctx, domain.CreateTraceSessionInput{SuiteID: c.suite.GlobalID()})
		require.NoError(t, err)
		model, err := b.svc.CreateModel(ctx, domain.CreateModelInput{Provider: domain.ProviderOther, Name: "m"})
		require.NoError(t, err)
		const examples, claimers = 6, 16
		for i := 0; i < examples; i++ {
			b.clock.Advance(1)
			_, err := b.svc.CreateExample(ctx, domain.CreateExampleInput{SessionID: session.GlobalID(), ModelID: model.GlobalID(),
				ActionToolMapID: c.m.GlobalID()})
			require.NoError(t, err)
		}
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			got  = map[string]int{}
			none int
			errs []string
		)
		for i := 0; i < claimers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e, err := b.svc.ClaimExample(ctx, domain.ClaimExampleInput{ModelID: ptr(model.GlobalID())})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					errs = append(errs, err.Error())
				case e == nil:
					none++
				default:
					got[e.ID]++
					if e.Status != domain.ExampleProcessing {
						errs = append(errs, "claimed example is "+string(e.Status))
					}
				}
			}()
		}
		wg.Wait()
		require.Empty(t, errs)
		require.Len(t, got, examples)
		for id, n := range got {
			require.Equal(t, 1, n, id)
		}
		require.Equal(t, claimers-examples, none)
	})
}
