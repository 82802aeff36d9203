package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// catalogQuery is the nested catalog query issue 5 measures: suite -> maps ->
// mappings -> action, tool -> parameter mappings -> both parameters, plus
// each map's coverage.
const catalogQuery = `{
  suites(first: 5) {
    nodes {
      name
      actionToolMaps(first: 5) {
        nodes {
          version
          coverage { isComplete }
          toolMappings(first: 5) {
            nodes {
              action { name }
              tool { name }
              parameterMappings(first: 5) { nodes { actionParameter { name } toolParameter { name } } }
            }
          }
        }
      }
    }
  }
}`

// seedCatalog creates suites suites, each with mappings actions of params
// parameters and maps maps onto one server of mappings tools, every map
// mapping action i to tool i and parameter j to parameter j. Mutations are
// batched with aliases and select no nested fields, so seeding never waits
// for a loader's batch window.
func seedCatalog(t testing.TB, s *catalogServer, suites, maps, mappings, params int) {
	t.Helper()
	admin := s.AdminToken
	server := s.createMcpServer(t, admin, "server")
	ps := make([]M, params)
	for j := range ps {
		ps[j] = M{"name": fmt.Sprintf("p%d", j), "type": "STRING", "required": true}
	}
	// many runs one request of n aliased mutations, each made by one(i).
	many := func(n int, one func(i int) string) {
		var q strings.Builder
		q.WriteString("mutation {")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&q, " m%d: %s", i, one(i))
		}
		q.WriteString(" }")
		s.query(t, admin, q.String(), nil)
	}
	paramsLiteral := string(mustJSON(t, ps))
	paramsLiteral = strings.NewReplacer(`"name"`, "name", `"type"`, "type", `"required"`, "required", `"STRING"`, "STRING").Replace(paramsLiteral)
	many(mappings, func(i int) string {
		return fmt.Sprintf(`createTool(input: {mcpServerId: %q, name: "tool-%d", parameters: %s}) { tool { id } }`, server, i, paramsLiteral)
	})
	// ids reads name -> id of the nodes at path, and of their parameters.
	ids := func(d jv, path string) (map[string]string, map[string]map[string]string) {
		out, params := map[string]string{}, map[string]map[string]string{}
		for _, n := range d.L(path) {
			out[n.S("name")] = n.S("id")
			params[n.S("name")] = map[string]string{}
			for _, p := range n.L("parameters.nodes") {
				params[n.S("name")][p.S("name")] = p.S("id")
			}
		}
		return out, params
	}
	tools, toolParams := ids(s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on McpServer { tools(first: 50) {
		nodes { id name parameters(first: 20) { nodes { id name } } } } } } }`, M{"id": server}), "node.tools.nodes")
	for si := 0; si < suites; si++ {
		suite := s.createSuite(t, admin, fmt.Sprintf("suite-%d", si))
		many(mappings, func(i int) string {
			return fmt.Sprintf(`createAction(input: {suiteId: %q, name: "action-%d", parameters: %s}) { action { id } }`, suite, i, paramsLiteral)
		})
		actions, actionParams := ids(s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on Suite { actions(first: 50) {
			nodes { id name parameters(first: 20) { nodes { id name } } } } } } }`, M{"id": suite}), "node.actions.nodes")
		for mi := 0; mi < maps; mi++ {
			m := s.createMap(t, admin, suite, server)
			many(mappings, func(i int) string {
				return fmt.Sprintf(`addActionToolMapping(input: {actionToolMapId: %q, actionId: %q, toolId: %q}) { mapping { id } }`,
					m, actions[fmt.Sprintf("action-%d", i)], tools[fmt.Sprintf("tool-%d", i)])
			})
			d := s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on ActionToolMap { toolMappings(first: 50) { nodes { id action { name } tool { name } } } } } }`, M{"id": m})
			var feeds []string
			for _, mp := range d.L("node.toolMappings.nodes") {
				a, tl := mp.S("action.name"), mp.S("tool.name")
				for j := range ps {
					p := fmt.Sprintf("p%d", j)
					feeds = append(feeds, fmt.Sprintf(`addParameterMapping(input: {mappingId: %q, actionParameterId: %q, toolParameterId: %q}) { parameterMapping { id } }`,
						mp.S("id"), actionParams[a][p], toolParams[tl][p]))
				}
			}
			many(len(feeds), func(i int) string { return feeds[i] })
		}
	}
}

// catalogStatements runs the nested catalog query and returns the SQL
// statements it cost and the parameter mappings it returned.
func catalogStatements(t testing.TB, s *catalogServer) (int64, int) {
	t.Helper()
	var out struct {
		Suites struct {
			Nodes []struct {
				ActionToolMaps struct {
					Nodes []struct {
						ToolMappings struct {
							Nodes []struct {
								ParameterMappings struct {
									Nodes []struct{ ActionParameter struct{ Name string } }
								}
							}
						}
					}
				}
			}
		}
	}
	before := s.DB.Statements()
	s.mustDo(t, s.AdminToken, catalogQuery, nil, &out)
	spent := s.DB.Statements() - before
	n := 0
	for _, su := range out.Suites.Nodes {
		for _, m := range su.ActionToolMaps.Nodes {
			for _, mp := range m.ToolMappings.Nodes {
				n += len(mp.ParameterMappings.Nodes)
			}
		}
	}
	return spent, n
}

// TestCatalogQueryStatements proves that the nested catalog query costs the
// same number of SQL statements for a catalog of one parameter mapping as for
// one of 180: statements grow with the depth of the query, not with its rows.
func TestCatalogQueryStatements(t *testing.T) {
	t.Parallel()
	for _, c := range testdb.Cases(t) {
		t.Run(c.Name, func(t *testing.T) {
			small := startCatalogServer(t, c.URL(t))
			large := startCatalogServer(t, c.URL(t))
			seedCatalog(t, small, 1, 1, 1, 1)
			seedCatalog(t, large, 4, 3, 5, 3)
			catalogStatements(t, small) // warm the token's last-used mark
			catalogStatements(t, large)
			nSmall, rowsSmall := catalogStatements(t, small)
			nLarge, rowsLarge := catalogStatements(t, large)
			require.Equal(t, 1, rowsSmall)
			require.Equal(t, 4*3*5*3, rowsLarge)
			require.Equal(t, nSmall, nLarge, "statements for 1 vs %d parameter mappings", rowsLarge)
			// token, suites, maps, coverage (3), mappings, actions, tools,
			// parameter mappings, action parameters, tool parameters
			require.LessOrEqual(t, nLarge, int64(12))
			t.Logf("nested catalog query: %d statements for 1 parameter mapping, %d for %d", nSmall, nLarge, rowsLarge)
		})
	}
}
