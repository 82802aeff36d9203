package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// Catalog test fixtures, created through the API.

func (s *catalogServer) createSuite(t testing.TB, token, name string) string {
	t.Helper()
	return s.query(t, token, `mutation($n: String!) { createSuite(input: {name: $n}) { suite { id } } }`, M{"n": name}).S("createSuite.suite.id")
}

func (s *catalogServer) createMcpServer(t testing.TB, token, name string) string {
	t.Helper()
	return s.query(t, token, `mutation($n: String!) { createMcpServer(input: {name: $n}) { mcpServer { id } } }`, M{"n": name}).S("createMcpServer.mcpServer.id")
}

// param is a parameter declaration: name, type, required.
type param struct {
	name, typ string
	required  bool
}

func paramsInput(ps []param) []M {
	out := []M{}
	for _, p := range ps {
		out = append(out, M{"name": p.name, "type": p.typ, "required": p.required})
	}
	return out
}

// createAction creates an action and returns its id and its parameters' ids by name.
func (s *catalogServer) createAction(t testing.TB, token, suite, name string, ps ...param) (string, map[string]string) {
	t.Helper()
	d := s.query(t, token, `mutation($in: CreateActionInput!) { createAction(input: $in) { action { id parameters { nodes { id name } } } } }`,
		M{"in": M{"suiteId": suite, "name": name, "parameters": paramsInput(ps)}})
	ids := map[string]string{}
	for _, p := range d.L("createAction.action.parameters.nodes") {
		ids[p.S("name")] = p.S("id")
	}
	return d.S("createAction.action.id"), ids
}

// createTool creates a tool and returns its id and its parameters' ids by name.
func (s *catalogServer) createTool(t testing.TB, token, server, name string, ps ...param) (string, map[string]string) {
	t.Helper()
	d := s.query(t, token, `mutation($in: CreateToolInput!) { createTool(input: $in) { tool { id parameters { nodes { id name } } } } }`,
		M{"in": M{"mcpServerId": server, "name": name, "parameters": paramsInput(ps)}})
	ids := map[string]string{}
	for _, p := range d.L("createTool.tool.parameters.nodes") {
		ids[p.S("name")] = p.S("id")
	}
	return d.S("createTool.tool.id"), ids
}

func (s *catalogServer) createMap(t testing.TB, token, suite, server string) string {
	t.Helper()
	return s.query(t, token, `mutation($s: ID!, $m: ID!) { createActionToolMap(input: {suiteId: $s, mcpServerId: $m}) { actionToolMap { id } } }`,
		M{"s": suite, "m": server}).S("createActionToolMap.actionToolMap.id")
}

const addMappingMutation = `mutation($m: ID!, $a: ID!, $t: ID!) { addActionToolMapping(input: {actionToolMapId: $m, actionId: $a, toolId: $t}) {
	mapping { id action { id } tool { id } actionToolMap { id } } actionToolMap { id version } } }`

func (s *catalogServer) addMapping(t testing.TB, token, m, action, tool string) string {
	t.Helper()
	return s.query(t, token, addMappingMutation, M{"m": m, "a": action, "t": tool}).S("addActionToolMapping.mapping.id")
}

const addParamMappingMutation = `mutation($m: ID!, $a: ID!, $t: ID!) { addParameterMapping(input: {mappingId: $m, actionParameterId: $a, toolParameterId: $t}) {
	parameterMapping { id actionParameter { id name } toolParameter { id name } actionToolMapping { id } } actionToolMap { version } } }`

func (s *catalogServer) addParamMapping(t testing.TB, token, mapping, ap, tp string) string {
	t.Helper()
	return s.query(t, token, addParamMappingMutation, M{"m": mapping, "a": ap, "t": tp}).S("addParameterMapping.parameterMapping.id")
}

func (s *catalogServer) createModel(t testing.TB, token, provider, name string) string {
	t.Helper()
	return s.query(t, token, `mutation($p: Provider!, $n: String!) { createModel(input: {provider: $p, name: $n}) { model { id } } }`,
		M{"p": provider, "n": name}).S("createModel.model.id")
}

func (s *catalogServer) createSession(t testing.TB, token, suite string) string {
	t.Helper()
	return s.query(t, token, `mutation($s: ID!) { createTraceSession(input: {suiteId: $s, description: "a trace"}) { traceSession { id } } }`,
		M{"s": suite}).S("createTraceSession.traceSession.id")
}

func (s *catalogServer) createExample(t testing.TB, token, session, model, m string) string {
	t.Helper()
	return s.query(t, token, `mutation($in: CreateExampleInput!) { createExample(input: $in) { example { id } } }`,
		M{"in": M{"sessionId": session, "modelId": model, "actionToolMapId": m}}).S("createExample.example.id")
}

func (s *catalogServer) claim(t testing.TB, token, example string) jv {
	t.Helper()
	return s.query(t, token, `mutation($id: ID!) { claimExample(input: {id: $id}) { example { id status claimedAt claimedBy { id } } } }`, M{"id": example})
}

func (s *catalogServer) mapVersion(t testing.TB, m string) int {
	t.Helper()
	return s.query(t, s.AdminToken, `query($id: ID!) { node(id: $id) { ... on ActionToolMap { version } } }`, M{"id": m}).N("node.version")
}

// TestCatalogEntities covers createSuite, createAction, createMcpServer,
// createTool and createModel: their fields, names unique within their owner
// (CONFLICT naming the field), input errors, the suites/mcpServers/models
// connections, node resolution of every kind, and who may write.
func TestCatalogEntities(t *testing.T) {
	t.Parallel()
	eachCatalogDB(t, func(t *testing.T, s *catalogServer) {
		admin := s.AdminToken

		t.Run("suites and actions", func(t *testing.T) {
			d := s.query(t, admin, `mutation { createSuite(input: {name: "  Gmail "}) { suite { id name createdAt updatedAt
				actions { totalCount nodes { id } } actionToolMaps { totalCount } traceSessions { totalCount } } } }`, nil)
			suite := d.at("createSuite.suite")
			require.Equal(t, "Gmail", suite.S("name"), "names are trimmed")
			require.Equal(t, 0, suite.N("actions.totalCount"))
			r := s.requireCode(t, admin, `mutation { createSuite(input: {name: "Gmail"}) { suite { id } } }`, nil, "CONFLICT")
			require.Equal(t, "name", r.ext("field"))
			r = s.requireCode(t, admin, `mutation { createSuite(input: {name: " "}) { suite { id } } }`, nil, "BAD_USER_INPUT")
			require.Equal(t, "name", r.ext("field"))

			d = s.query(t, admin, `mutation($in: CreateActionInput!) { createAction(input: $in) { action { id name description suite { id name }
				parameters { totalCount nodes { id name type required description position action { id } } } } } }`,
				M{"in": M{"suiteId": suite.S("id"), "name": "send_email", "description": "Send a message",
					"parameters": []M{{"name": "to", "type": "STRING", "required": true}, {"name": "subject", "type": "STRING"},
						{"name": "priority", "type": "INTEGER", "description": "1-5"}}}})
			a := d.at("createAction.action")
			require.Equal(t, "send_email", a.S("name"))
			require.Equal(t, "Send a message", a.S("description"))
			require.Equal(t, suite.S("id"), a.S("suite.id"))
			require.Equal(t, 3, a.N("parameters.totalCount"))
			require.Equal(t, []string{"to", "subject", "priority"}, a.Col("parameters.nodes", "name"), "declared order")
			require.Equal(t, []string{"STRING", "STRING", "INTEGER"}, a.Col("parameters.nodes", "type"))
			require.True(t, a.B("parameters.nodes.0.required"))
			require.False(t, a.B("parameters.nodes.1.required"), "required defaults to false")
			require.Equal(t, "1-5", a.S("parameters.nodes.2.description"))
			require.Equal(t, 2, a.N("parameters.nodes.2.position"))
			require.Equal(t, a.S("id"), a.S("parameters.nodes.0.action.id"))

			create := `mutation($in: CreateActionInput!) { createAction(input: $in) { action { id } } }`
			r = s.requireCode(t, admin, create, M{"in": M{"suiteId": suite.S("id"), "name": "send_email"}}, "CONFLICT")
			require.Equal(t, "name", r.ext("field"))
			require.Contains(t, r.Errors[0].Message, "send_email")
			r = s.requireCode(t, admin, create, M{"in": M{"suiteId": suite.S("id"), "name": "dup",
				"parameters": []M{{"name": "x", "type": "STRING"}, {"name": "x", "type": "NUMBER"}}}}, "CONFLICT")
			require.Equal(t, "parameters[1].name", r.ext("field"))
			r = s.requireCode(t, admin, create, M{"in": M{"suiteId": suite.S("id"), "name": "bad", "parameters": []M{{"name": "x", "type": "TEXT"}}}}, "BAD_USER_INPUT")
			require.Equal(t, "in.parameters[0].type", r.ext("field"))
			r = s.requireCode(t, admin, create, M{"in": M{"suiteId": missingID("Suite"), "name": "x"}}, "NOT_FOUND")
			require.Equal(t, "suiteId", r.ext("field"))
			r = s.requireCode(t, admin, create, M{"in": M{"suiteId": "not-an-id", "name": "x"}}, "BAD_USER_INPUT")
			require.Equal(t, "suiteId", r.ext("field"))
			r = s.requireCode(t, admin, create, M{"in": M{"suiteId": a.S("id"), "name": "x"}}, "NOT_FOUND")
			require.Equal(t, "suiteId", r.ext("field"), "an id of another kind names no suite")

			// The same action name in another suite is fine.
			other := s.createSuite(t, admin, "Outlook")
			s.createAction(t, admin, other, "send_email")
		})

		t.Run("servers and tools", func(t *testing.T) {
			d := s.query(t, admin, `mutation { createMcpServer(input: {name: "github"}) { mcpServer { id name createdAt updatedAt tools { totalCount } } } }`, nil)
			server := d.S("createMcpServer.mcpServer.id")
			r := s.requireCode(t, admin, `mutation { createMcpServer(input: {name: "github"}) { mcpServer { id } } }`, nil, "CONFLICT")
			require.Equal(t, "name", r.ext("field"))
			d = s.query(t, admin, `mutation($in: CreateToolInput!) { createTool(input: $in) { tool { id name description inputSchema mcpServer { id }
				parameters { nodes { name type required jsonSchema tool { id } } } } } }`,
				M{"in": M{"mcpServerId": server, "name": "create_issue", "description": "Open an issue",
					"parameters": []M{{"name": "title", "type": "STRING", "required": true}, {"name": "labels", "type": "ARRAY"}}}})
			tool := d.at("createTool.tool")
			require.Equal(t, "Open an issue", tool.S("description"))
			require.True(t, tool.Null("inputSchema"), "hand-made tools have no schema")
			require.Equal(t, server, tool.S("mcpServer.id"))
			require.Equal(t, []string{"title", "labels"}, tool.Col("parameters.nodes", "name"))
			require.True(t, tool.Null("parameters.nodes.0.jsonSchema"))
			r = s.requireCode(t, admin, `mutation($s: ID!) { createTool(input: {mcpServerId: $s, name: "create_issue"}) { tool { id } } }`, M{"s": server}, "CONFLICT")
			require.Equal(t, "name", r.ext("field"))
			r = s.requireCode(t, admin, `mutation($s: ID!) { createTool(input: {mcpServerId: $s, name: "t"}) { tool { id } } }`, M{"s": missingID("McpServer")}, "NOT_FOUND")
			require.Equal(t, "mcpServerId", r.ext("field"))
		})

		t.Run("models", func(t *testing.T) {
			d := s.query(t, admin, `mutation { createModel(input: {provider: ANTHROPIC, name: "claude-sonnet"}) { model { id provider name createdAt examples { totalCount } } } }`, nil)
			require.Equal(t, "ANTHROPIC", d.S("createModel.model.provider"))
			r := s.requireCode(t, admin, `mutation { createModel(input: {provider: ANTHROPIC, name: "claude-sonnet"}) { model { id } } }`, nil, "CONFLICT")
			require.Equal(t, "name", r.ext("field"))
			s.createModel(t, admin, "OTHER", "claude-sonnet") // unique per provider
			for _, p := range []string{"OPENAI", "GOOGLE", "META", "MISTRAL"} {
				s.createModel(t, admin, p, "m-"+strings.ToLower(p))
			}
			s.requireCode(t, admin, `mutation { createModel(input: {provider: IBM, name: "x"}) { model { id } } }`, nil, "BAD_USER_INPUT")
		})

		t.Run("connections", func(t *testing.T) {
			for i := 0; i < 5; i++ {
				s.createSuite(t, admin, fmt.Sprintf("paged-%d", i))
			}
			all := s.query(t, admin, `{ suites(first: 100) { totalCount nodes { name } } }`, nil)
			names := all.Col("suites.nodes", "name")
			require.True(t, sort.StringsAreSorted(names), "suites by name: %v", names)
			require.Equal(t, len(names), all.N("suites.totalCount"))
			var seen []string
			after := any(nil)
			for {
				pg := s.query(t, admin, `query($a: String) { suites(first: 2, after: $a) { edges { cursor node { name } } pageInfo { hasNextPage endCursor } } }`, M{"a": after})
				for _, e := range pg.L("suites.edges") {
					seen = append(seen, e.S("node.name"))
				}
				if !pg.B("suites.pageInfo.hasNextPage") {
					break
				}
				after = pg.S("suites.pageInfo.endCursor")
			}
			require.Equal(t, names, seen, "pages walk every suite once")
			s.requireCode(t, admin, `{ suites(first: 101) { totalCount } }`, nil, "LIMIT_EXCEEDED")
			d := s.query(t, admin, `{ mcpServers(first: 10) { totalCount nodes { name } } models { totalCount nodes { provider name } } }`, nil)
			require.Equal(t, 1, d.N("mcpServers.totalCount"))
			require.Equal(t, 6, d.N("models.totalCount"))
		})

		t.Run("node resolves every kind", func(t *testing.T) {
			suite := s.createSuite(t, admin, "node-suite")
			server := s.createMcpServer(t, admin, "node-server")
			action, aps := s.createAction(t, admin, suite, "act", param{"p", "STRING", true})
			tool, tps := s.createTool(t, admin, server, "tool", param{"p", "STRING", true})
			m := s.createMap(t, admin, suite, server)
			mapping := s.addMapping(t, admin, m, action, tool)
			pm := s.addParamMapping(t, admin, mapping, aps["p"], tps["p"])
			model := s.createModel(t, admin, "META", "llama-node")
			session := s.createSession(t, admin, suite)
			example := s.createExample(t, admin, session, model, m)
			ids := map[string]string{"Suite": suite, "McpServer": server, "Action": action, "ActionParameter": aps["p"], "Tool": tool,
				"ToolParameter": tps["p"], "ActionToolMap": m, "ActionToolMapping": mapping, "ActionToolParameterMapping": pm,
				"Model": model, "TraceSession": session, "Example": example}
			var list []string
			for kind, id := range ids {
				list = append(list, id)
				require.Equal(t, kind, s.query(t, admin, `query($id: ID!) { node(id: $id) { __typename id } }`, M{"id": id}).S("node.__typename"))
				require.True(t, s.query(t, admin, `query($id: ID!) { node(id: $id) { id } }`, M{"id": missingID(kind)}).Null("node"))
			}
			d := s.query(t, admin, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, M{"ids": list})
			require.Equal(t, list, d.Col("nodes", "id"))
			seen := map[string]bool{}
			for _, id := range list {
				require.False(t, seen[id], "ids never collide across kinds")
				seen[id] = true
			}
		})

		t.Run("authorization", func(t *testing.T) {
			project := s.createProject(t, admin, "catalog-auth")
			_, agent := s.userWithToken(t, "cat-agent", "AGENT", project)
			_, member := s.member(t, "cat-member")
			suite := s.createSuite(t, member, "member-suite") // members write the catalog
			for name, q := range map[string]string{
				"createSuite":     `mutation { createSuite(input: {name: "agent-suite"}) { suite { id } } }`,
				"createMcpServer": `mutation { createMcpServer(input: {name: "agent-server"}) { mcpServer { id } } }`,
				"createModel":     `mutation { createModel(input: {provider: OTHER, name: "agent-model"}) { model { id } } }`,
			} {
				t.Run(name, func(t *testing.T) { s.requireCode(t, agent, q, nil, "FORBIDDEN") })
			}
			s.requireCode(t, agent, `mutation($s: ID!) { createAction(input: {suiteId: $s, name: "x"}) { action { id } } }`, M{"s": suite}, "FORBIDDEN")
			s.requireCode(t, agent, `mutation($s: ID!) { deleteSuite(input: {id: $s}) { deletedId } }`, M{"s": suite}, "FORBIDDEN")
			// Agents read the catalog; it is global, not per project.
			d := s.query(t, agent, `{ suites(first: 100) { nodes { name } } }`, nil)
			require.Contains(t, d.Col("suites.nodes", "name"), "member-suite")
			require.Equal(t, "member-suite", s.query(t, agent, `query($id: ID!) { node(id: $id) { ... on Suite { name } } }`, M{"id": suite}).S("node.name"))
			s.requireCode(t, "", `{ suites { totalCount } }`, nil, "UNAUTHENTICATED")
		})
	})
}

// TestActionToolMaps covers maps, mappings and parameter mappings: their rules,
// coverage, the version, removal, and deletes refused while referenced.
func TestActionToolMaps(t *testing.T) {
	t.Parallel()
	eachCatalogDB(t, func(t *testing.T, s *catalogServer) {
		admin := s.AdminToken
		gmail := s.createSuite(t, admin, "Gmail")
		outlook := s.createSuite(t, admin, "Outlook")
		server := s.createMcpServer(t, admin, "mail-mcp")
		otherServer := s.createMcpServer(t, admin, "other-mcp")
		send, sendP := s.createAction(t, admin, gmail, "send_email",
			param{"to", "STRING", true}, param{"body", "STRING", true}, param{"count", "INTEGER", false}, param{"ratio", "NUMBER", false}, param{"cc", "STRING", true})
		archive, archiveP := s.createAction(t, admin, gmail, "archive", param{"id", "STRING", true})
		label, _ := s.createAction(t, admin, gmail, "label")
		foreign, _ := s.createAction(t, admin, outlook, "send_email")
		sendTool, sendToolP := s.createTool(t, admin, server, "messages.send",
			param{"recipient", "STRING", true}, param{"text", "STRING", true}, param{"n", "NUMBER", false}, param{"k", "INTEGER", false}, param{"thread", "STRING", false})
		modifyTool, modifyToolP := s.createTool(t, admin, server, "messages.modify", param{"message_id", "STRING", true}, param{"remove_labels", "ARRAY", true})
		foreignTool, _ := s.createTool(t, admin, otherServer, "messages.send")

		d := s.query(t, admin, `mutation($s: ID!, $m: ID!) { createActionToolMap(input: {suiteId: $s, mcpServerId: $m}) {
			actionToolMap { id version suite { id } mcpServer { id } createdAt updatedAt toolMappings { totalCount }
			coverage { isComplete unmappedActions { name } unfedToolParameters { name } unusedActionParameters { name } } } } }`,
			M{"s": gmail, "m": server})
		atm := d.at("createActionToolMap.actionToolMap")
		m := atm.S("id")
		require.Equal(t, 1, atm.N("version"))
		require.Equal(t, gmail, atm.S("suite.id"))
		require.Equal(t, server, atm.S("mcpServer.id"))
		require.False(t, atm.B("coverage.isComplete"))
		require.Equal(t, []string{"archive", "label", "send_email"}, atm.Col("coverage.unmappedActions", "name"))
		require.Empty(t, atm.L("coverage.unfedToolParameters"))
		s.requireCode(t, admin, `mutation($s: ID!, $m: ID!) { createActionToolMap(input: {suiteId: $s, mcpServerId: $m}) { actionToolMap { id } } }`,
			M{"s": gmail, "m": missingID("McpServer")}, "NOT_FOUND")

		var sendMapping string
		t.Run("addActionToolMapping", func(t *testing.T) {
			r := s.requireCode(t, admin, addMappingMutation, M{"m": m, "a": foreign, "t": sendTool}, "BAD_USER_INPUT")
			require.Equal(t, "actionId", r.ext("field"))
			require.Contains(t, r.Errors[0].Message, "Gmail")
			r = s.requireCode(t, admin, addMappingMutation, M{"m": m, "a": send, "t": foreignTool}, "BAD_USER_INPUT")
			require.Equal(t, "toolId", r.ext("field"))
			r = s.requireCode(t, admin, addMappingMutation, M{"m": missingID("ActionToolMap"), "a": send, "t": sendTool}, "NOT_FOUND")
			require.Equal(t, "actionToolMapId", r.ext("field"))
			r = s.requireCode(t, admin, addMappingMutation, M{"m": m, "a": send, "t": missingID("Tool")}, "NOT_FOUND")
			require.Equal(t, "toolId", r.ext("field"))
			require.Equal(t, 1, s.mapVersion(t, m), "refused changes leave the version")

			d := s.query(t, admin, addMappingMutation, M{"m": m, "a": send, "t": sendTool})
			sendMapping = d.S("addActionToolMapping.mapping.id")
			require.Equal(t, send, d.S("addActionToolMapping.mapping.action.id"))
			require.Equal(t, sendTool, d.S("addActionToolMapping.mapping.tool.id"))
			require.Equal(t, m, d.S("addActionToolMapping.mapping.actionToolMap.id"))
			require.Equal(t, 2, d.N("addActionToolMapping.actionToolMap.version"))

			r = s.requireCode(t, admin, addMappingMutation, M{"m": m, "a": send, "t": modifyTool}, "CONFLICT")
			require.Equal(t, "actionId", r.ext("field"), "one mapping per action per map")
			require.Equal(t, 2, s.mapVersion(t, m))
			// Two actions may map to the same tool.
			s.addMapping(t, admin, m, label, modifyTool)
			require.Equal(t, 3, s.mapVersion(t, m))
		})

		t.Run("addParameterMapping", func(t *testing.T) {
			q := addParamMappingMutation
			r := s.requireCode(t, admin, q, M{"m": sendMapping, "a": archiveP["id"], "t": sendToolP["recipient"]}, "BAD_USER_INPUT")
			require.Equal(t, "actionParameterId", r.ext("field"), "the action parameter must be the mapping's action's")
			r = s.requireCode(t, admin, q, M{"m": sendMapping, "a": sendP["to"], "t": modifyToolP["message_id"]}, "BAD_USER_INPUT")
			require.Equal(t, "toolParameterId", r.ext("field"), "the tool parameter must be the mapping's tool's")
			for _, tc := range []struct{ a, t string }{{"to", "n"}, {"ratio", "k"}, {"count", "recipient"}, {"to", "k"}} {
				r = s.requireCode(t, admin, q, M{"m": sendMapping, "a": sendP[tc.a], "t": sendToolP[tc.t]}, "BAD_USER_INPUT")
				require.Equal(t, "toolParameterId", r.ext("field"), "%s -> %s", tc.a, tc.t)
				require.Contains(t, r.Errors[0].Message, "INTEGER may feed a NUMBER")
			}
			r = s.requireCode(t, admin, q, M{"m": missingID("ActionToolMapping"), "a": sendP["to"], "t": sendToolP["recipient"]}, "NOT_FOUND")
			require.Equal(t, "mappingId", r.ext("field"))
			require.Equal(t, 3, s.mapVersion(t, m))

			d := s.query(t, admin, q, M{"m": sendMapping, "a": sendP["to"], "t": sendToolP["recipient"]})
			require.Equal(t, "to", d.S("addParameterMapping.parameterMapping.actionParameter.name"))
			require.Equal(t, "recipient", d.S("addParameterMapping.parameterMapping.toolParameter.name"))
			require.Equal(t, sendMapping, d.S("addParameterMapping.parameterMapping.actionToolMapping.id"))
			require.Equal(t, 4, d.N("addParameterMapping.actionToolMap.version"))
			s.addParamMapping(t, admin, sendMapping, sendP["count"], sendToolP["n"]) // INTEGER fits NUMBER
			s.addParamMapping(t, admin, sendMapping, sendP["count"], sendToolP["k"]) // and INTEGER; one action parameter may feed several
			require.Equal(t, 6, s.mapVersion(t, m))
			r = s.requireCode(t, admin, q, M{"m": sendMapping, "a": sendP["body"], "t": sendToolP["recipient"]}, "CONFLICT")
			require.Equal(t, "toolParameterId", r.ext("field"), "a tool parameter is fed once per mapping")
		})

		coverage := `query($id: ID!) { node(id: $id) { ... on ActionToolMap { version coverage { isComplete
			unmappedActions { name } unfedToolParameters { name tool { name } } unusedActionParameters { name action { name } } } } } }`
		t.Run("coverage", func(t *testing.T) {
			c := s.query(t, admin, coverage, M{"id": m}).at("node.coverage")
			require.False(t, c.B("isComplete"))
			require.Equal(t, []string{"archive"}, c.Col("unmappedActions", "name"))
			// send: text unfed; label -> modify: message_id and remove_labels unfed.
			require.ElementsMatch(t, []string{"text", "message_id", "remove_labels"}, c.Col("unfedToolParameters", "name"))
			// body and cc are required and feed nothing; label has no parameters.
			require.ElementsMatch(t, []string{"body", "cc"}, c.Col("unusedActionParameters", "name"))

			archiveMapping := s.addMapping(t, admin, m, archive, modifyTool)
			s.addParamMapping(t, admin, archiveMapping, archiveP["id"], modifyToolP["message_id"])
			s.addParamMapping(t, admin, sendMapping, sendP["body"], sendToolP["text"])
			c = s.query(t, admin, coverage, M{"id": m}).at("node.coverage")
			require.Empty(t, c.L("unmappedActions"))
			require.ElementsMatch(t, []string{"message_id", "remove_labels"}, c.Col("unfedToolParameters", "name"), "label's mapping still leaves them unfed")
			require.Equal(t, []string{"cc"}, c.Col("unusedActionParameters", "name"))
		})

		t.Run("remove mappings", func(t *testing.T) {
			v := s.mapVersion(t, m)
			// Remove label's mapping (modify tool), and feed cc into thread.
			var labelMapping string
			d := s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on ActionToolMap { toolMappings { totalCount nodes { id action { name } parameterMappings { totalCount } } } } } }`, M{"id": m})
			require.Equal(t, 3, d.N("node.toolMappings.totalCount"))
			for _, n := range d.L("node.toolMappings.nodes") {
				if n.S("action.name") == "label" {
					labelMapping = n.S("id")
				}
			}
			d = s.query(t, admin, `mutation($id: ID!) { removeActionToolMapping(input: {id: $id}) { removedMappingId actionToolMap { version } } }`, M{"id": labelMapping})
			require.Equal(t, labelMapping, d.S("removeActionToolMapping.removedMappingId"))
			require.Equal(t, v+1, d.N("removeActionToolMapping.actionToolMap.version"))
			s.requireCode(t, admin, `mutation($id: ID!) { removeActionToolMapping(input: {id: $id}) { removedMappingId } }`, M{"id": labelMapping}, "NOT_FOUND")
			pm := s.addParamMapping(t, admin, sendMapping, sendP["cc"], sendToolP["thread"])
			d = s.query(t, admin, `mutation($id: ID!) { removeParameterMapping(input: {id: $id}) { removedParameterMappingId actionToolMap { version } } }`, M{"id": pm})
			require.Equal(t, pm, d.S("removeParameterMapping.removedParameterMappingId"))
			require.Equal(t, v+3, d.N("removeParameterMapping.actionToolMap.version"))
			s.addParamMapping(t, admin, sendMapping, sendP["cc"], sendToolP["thread"])
			// Remaining: archive (id -> message_id; remove_labels unfed) and label unmapped.
			c := s.query(t, admin, coverage, M{"id": m}).at("node.coverage")
			require.Equal(t, []string{"label"}, c.Col("unmappedActions", "name"))
			require.Equal(t, []string{"remove_labels"}, c.Col("unfedToolParameters", "name"))
			require.Empty(t, c.L("unusedActionParameters"))
		})

		t.Run("complete map", func(t *testing.T) {
			suite := s.createSuite(t, admin, "Tiny")
			a, ap := s.createAction(t, admin, suite, "go", param{"where", "STRING", true}, param{"why", "STRING", false})
			tool, tp := s.createTool(t, admin, server, "travel", param{"destination", "STRING", true}, param{"note", "STRING", false})
			tiny := s.createMap(t, admin, suite, server)
			mp := s.addMapping(t, admin, tiny, a, tool)
			require.False(t, s.query(t, admin, coverage, M{"id": tiny}).B("node.coverage.isComplete"))
			s.addParamMapping(t, admin, mp, ap["where"], tp["destination"])
			c := s.query(t, admin, coverage, M{"id": tiny}).at("node.coverage")
			require.True(t, c.B("isComplete"), "optional parameters may stay unmapped: %v", c.v)
		})

		t.Run("examples record the version", func(t *testing.T) {
			model := s.createModel(t, admin, "OPENAI", "gpt-version")
			session := s.createSession(t, admin, gmail)
			v := s.mapVersion(t, m)
			e := s.createExample(t, admin, session, model, m)
			s.addMapping(t, admin, m, label, modifyTool)
			d := s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on Example { actionToolMapVersion actionToolMap { version } } } }`, M{"id": e})
			require.Equal(t, v, d.N("node.actionToolMapVersion"))
			require.Equal(t, v+1, d.N("node.actionToolMap.version"))
		})

		t.Run("deletes refused while referenced", func(t *testing.T) {
			del := func(what, id string) gqlResponse {
				return s.do(t, admin, fmt.Sprintf(`mutation($id: ID!) { delete%s(input: {id: $id}) { deletedId } }`, what), M{"id": id})
			}
			for _, tc := range []struct{ what, id, by string }{
				{"Action", send, "action tool mapping"},
				{"Tool", sendTool, "action tool mapping"},
				{"Suite", gmail, "action tool map"},
				{"Suite", gmail, "trace session"},
				{"McpServer", server, "action tool maps"},
				{"ActionToolMap", m, "1 example"},
			} {
				r := del(tc.what, tc.id)
				require.Equal(t, "CONFLICT", r.code(), "delete%s: %+v", tc.what, r.Errors)
				require.Contains(t, r.Errors[0].Message, tc.by, "delete%s says what still uses it", tc.what)
				require.Equal(t, "id", r.ext("field"))
				require.NotNil(t, r.ext("references"))
			}
			// Unreferenced things go, with what they own.
			lone, _ := s.createAction(t, admin, gmail, "lonely", param{"p", "STRING", false})
			require.Equal(t, lone, s.query(t, admin, `mutation($id: ID!) { deleteAction(input: {id: $id}) { deletedId } }`, M{"id": lone}).S("deleteAction.deletedId"))
			require.True(t, s.query(t, admin, `query($id: ID!) { node(id: $id) { id } }`, M{"id": lone}).Null("node"))
			s.requireCode(t, admin, `mutation($id: ID!) { deleteAction(input: {id: $id}) { deletedId } }`, M{"id": lone}, "NOT_FOUND")
			// The foreign tool is mapped nowhere; its server is referenced by no map.
			s.query(t, admin, `mutation($id: ID!) { deleteTool(input: {id: $id}) { deletedId } }`, M{"id": foreignTool})
			s.query(t, admin, `mutation($id: ID!) { deleteMcpServer(input: {id: $id}) { deletedId } }`, M{"id": otherServer})
			// Outlook has actions but no map or session: it goes with its actions.
			s.query(t, admin, `mutation($id: ID!) { deleteSuite(input: {id: $id}) { deletedId } }`, M{"id": outlook})
			require.True(t, s.query(t, admin, `query($id: ID!) { node(id: $id) { id } }`, M{"id": foreign}).Null("node"))
		})
	})
}

// githubTools is a realistic tools/list result of a GitHub-like MCP server:
// nested objects, arrays of objects, enums, unions and optional parameters.
const githubTools = `{
  "tools": [
    {
      "name": "create_issue",
      "description": "Create a new issue in a GitHub repository",
      "inputSchema": {
        "type": "object",
        "properties": {
          "owner": {"type": "string", "description": "Repository owner"},
          "repo": {"type": "string", "description": "Repository name"},
          "title": {"type": "string", "description": "Issue title"},
          "body": {"type": "string", "description": "Issue body"},
          "assignees": {"type": "array", "items": {"type": "string"}, "description": "Usernames to assign"},
          "labels": {"type": "array", "items": {"type": "string"}},
          "milestone": {"type": "number", "description": "Milestone number"}
        },
        "required": ["owner", "repo", "title"]
      }
    },
    {
      "name": "search_repositories",
      "description": "Search for GitHub repositories",
      "inputSchema": {
        "type": "object",
        "properties": {
          "query": {"type": "string"},
          "page": {"type": "integer", "minimum": 1},
          "perPage": {"type": "integer", "maximum": 100}
        },
        "required": ["query"]
      }
    },
    {
      "name": "create_pull_request_review",
      "description": "Create a review on a pull request",
      "inputSchema": {
        "type": "object",
        "properties": {
          "owner": {"type": "string"},
          "repo": {"type": "string"},
          "pull_number": {"type": "integer"},
          "event": {"enum": ["APPROVE", "REQUEST_CHANGES", "COMMENT"]},
          "comments": {
            "type": "array",
            "items": {
              "type": "object",
              "properties": {
                "path": {"type": "string"},
                "position": {"type": "integer"},
                "body": {"type": "string"}
              },
              "required": ["path", "body"]
            }
          },
          "commit_id": {"type": ["string", "null"]}
        },
        "required": ["owner", "repo", "pull_number", "event"]
      }
    },
    {
      "name": "push_files",
      "description": "Push multiple files in a single commit",
      "inputSchema": {
        "type": "object",
        "properties": {
          "owner": {"type": "string"},
          "repo": {"type": "string"},
          "branch": {"type": "string"},
          "files": {"type": "array", "items": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}},
          "message": {"type": "string"},
          "author": {"type": "object", "properties": {"name": {"type": "string"}, "email": {"type": "string"}, "date": {"type": "string", "format": "date-time"}}}
        },
        "required": ["owner", "repo", "branch", "files", "message"]
      }
    },
    {
      "name": "update_issue",
      "description": "Update an existing issue",
      "inputSchema": {
        "type": "object",
        "properties": {
          "owner": {"type": "string"},
          "repo": {"type": "string"},
          "issue_number": {"type": "number"},
          "state": {"type": "string", "enum": ["open", "closed"]},
          "locked": {"type": "boolean"},
          "metadata": {"anyOf": [{"type": "object"}, {"type": "string"}]},
          "extra": {}
        },
        "required": ["owner", "repo", "issue_number"]
      }
    },
    {
      "name": "get_me",
      "description": "Details of the authenticated user",
      "inputSchema": {"type": "object", "properties": {}}
    }
  ]
}`

const importMutation = `mutation($s: ID!, $j: String!) { importMcpTools(input: {mcpServerId: $s, toolsJson: $j}) {
	created { id name } updated { id name } unchanged { id name } } }`

// TestImportMcpTools imports a realistic tools/list document, re-imports it
// (unchanged), imports a changed one (updated, created), accepts the other
// shapes of a tools/list result, and refuses bad documents and imports that
// would break parameter mappings, changing nothing.
func TestImportMcpTools(t *testing.T) {
	t.Parallel()
	eachCatalogDB(t, func(t *testing.T, s *catalogServer) {
		admin := s.AdminToken
		server := s.createMcpServer(t, admin, "github")
		toolsQuery := `query($id: ID!) { node(id: $id) { ... on McpServer { updatedAt tools(first: 20) { totalCount nodes { id name description inputSchema
			parameters(first: 20) { nodes { name type required description position jsonSchema } } } } } } }`
		tools := func() map[string]jv {
			out := map[string]jv{}
			for _, n := range s.query(t, admin, toolsQuery, M{"id": server}).L("node.tools.nodes") {
				out[n.S("name")] = n
			}
			return out
		}
		params := func(tool jv) map[string]jv {
			out := map[string]jv{}
			for _, p := range tool.L("parameters.nodes") {
				out[p.S("name")] = p
			}
			return out
		}

		d := s.query(t, admin, importMutation, M{"s": server, "j": githubTools})
		require.Equal(t, []string{"create_issue", "search_repositories", "create_pull_request_review", "push_files", "update_issue", "get_me"},
			d.Col("importMcpTools.created", "name"), "created, in document order")
		require.Empty(t, d.L("importMcpTools.updated"))
		require.Empty(t, d.L("importMcpTools.unchanged"))

		got := tools()
		require.Len(t, got, 6)
		issue := got["create_issue"]
		require.Equal(t, "Create a new issue in a GitHub repository", issue.S("description"))
		require.Equal(t, "object", issue.S("inputSchema.type"), "the schema is kept")
		require.Equal(t, []string{"owner", "repo", "title", "body", "assignees", "labels", "milestone"}, issue.Col("parameters.nodes", "name"), "schema order")
		ip := params(issue)
		require.Equal(t, "STRING", ip["owner"].S("type"))
		require.True(t, ip["owner"].B("required"))
		require.Equal(t, "Repository owner", ip["owner"].S("description"))
		require.False(t, ip["body"].B("required"))
		require.Equal(t, "ARRAY", ip["assignees"].S("type"))
		require.Equal(t, "string", ip["assignees"].S("jsonSchema.items.type"))
		require.Equal(t, "NUMBER", ip["milestone"].S("type"))
		require.Equal(t, 6, ip["milestone"].N("position"))

		review := params(got["create_pull_request_review"])
		require.Equal(t, "INTEGER", review["pull_number"].S("type"))
		require.Equal(t, "STRING", review["event"].S("type"), "an enum of strings is a STRING")
		require.Equal(t, "ARRAY", review["comments"].S("type"))
		require.Equal(t, "object", review["comments"].S("jsonSchema.items.type"), "nested structure is kept")
		require.Equal(t, "integer", review["comments"].S("jsonSchema.items.properties.position.type"))
		require.Equal(t, "STRING", review["commit_id"].S("type"), `["string", "null"] is a nullable STRING`)
		require.False(t, review["commit_id"].B("required"))

		push := params(got["push_files"])
		require.Equal(t, "ARRAY", push["files"].S("type"))
		require.Equal(t, "OBJECT", push["author"].S("type"))
		require.Equal(t, "date-time", push["author"].S("jsonSchema.properties.date.format"))
		update := params(got["update_issue"])
		require.Equal(t, "BOOLEAN", update["locked"].S("type"))
		require.Equal(t, "OBJECT", update["metadata"].S("type"), "a union of types is arbitrary JSON: OBJECT")
		require.Equal(t, "OBJECT", update["extra"].S("type"), "no type at all is arbitrary JSON: OBJECT")
		require.Empty(t, got["get_me"].L("parameters.nodes"))

		t.Run("re-import is unchanged", func(t *testing.T) {
			before := s.query(t, admin, toolsQuery, M{"id": server}).S("node.updatedAt")
			d := s.query(t, admin, importMutation, M{"s": server, "j": githubTools})
			require.Len(t, d.L("importMcpTools.unchanged"), 6)
			require.Empty(t, d.L("importMcpTools.created"))
			require.Empty(t, d.L("importMcpTools.updated"))
			require.Equal(t, got["create_issue"].S("id"), d.S("importMcpTools.unchanged.0.id"), "the same tool, not a new one")
			require.Equal(t, before, s.query(t, admin, toolsQuery, M{"id": server}).S("node.updatedAt"), "nothing was written")
		})

		t.Run("bare array and JSON-RPC response", func(t *testing.T) {
			var doc struct {
				Tools []json.RawMessage `json:"tools"`
			}
			require.NoError(t, json.Unmarshal([]byte(githubTools), &doc))
			arr, _ := json.Marshal(doc.Tools)
			d := s.query(t, admin, importMutation, M{"s": server, "j": string(arr)})
			require.Len(t, d.L("importMcpTools.unchanged"), 6)
			rpc, _ := json.Marshal(M{"jsonrpc": "2.0", "id": 1, "result": M{"tools": doc.Tools}})
			d = s.query(t, admin, importMutation, M{"s": server, "j": string(rpc)})
			require.Len(t, d.L("importMcpTools.unchanged"), 6)
		})

		t.Run("changed document", func(t *testing.T) {
			changed := strings.Replace(githubTools, `"description": "Search for GitHub repositories"`, `"description": "Search repositories"`, 1)
			changed = strings.Replace(changed, `"perPage": {"type": "integer", "maximum": 100}`, `"perPage": {"type": "integer", "maximum": 100}, "sort": {"type": "string"}`, 1)
			changed = strings.Replace(changed, `"locked": {"type": "boolean"}`, `"locked": {"type": "string"}`, 1)
			changed = strings.Replace(changed, `{
      "name": "get_me",`, `{
      "name": "list_commits",
      "description": "List commits",
      "inputSchema": {"type": "object", "properties": {"sha": {"type": "string"}}, "required": ["sha"]}
    },
    {
      "name": "get_me",`, 1)
			d := s.query(t, admin, importMutation, M{"s": server, "j": changed})
			require.Equal(t, []string{"list_commits"}, d.Col("importMcpTools.created", "name"))
			require.Equal(t, []string{"search_repositories", "update_issue"}, d.Col("importMcpTools.updated", "name"))
			require.Equal(t, []string{"create_issue", "create_pull_request_review", "push_files", "get_me"}, d.Col("importMcpTools.unchanged", "name"))
			now := tools()
			require.Len(t, now, 7)
			require.Equal(t, "Search repositories", now["search_repositories"].S("description"))
			require.Equal(t, got["search_repositories"].S("id"), now["search_repositories"].S("id"), "updated in place")
			require.Equal(t, []string{"query", "page", "perPage", "sort"}, now["search_repositories"].Col("parameters.nodes", "name"))
			require.Equal(t, "STRING", params(now["update_issue"])["locked"].S("type"))
			// A tool the document no longer lists is kept.
			d = s.query(t, admin, importMutation, M{"s": server, "j": `{"tools": [{"name": "get_me", "description": "Details of the authenticated user", "inputSchema": {"type": "object", "properties": {}}}]}`})
			require.Equal(t, []string{"get_me"}, d.Col("importMcpTools.unchanged", "name"))
			require.Len(t, tools(), 7)
		})

		t.Run("invalid JSON changes nothing", func(t *testing.T) {
			before := tools()
			bad := "{\n  \"tools\": [\n    {\"name\": \"x\", \"description\": oops}\n  ]\n}"
			r := s.requireCode(t, admin, importMutation, M{"s": server, "j": bad}, "BAD_USER_INPUT")
			require.Equal(t, "toolsJson", r.ext("field"))
			require.Equal(t, float64(3), r.ext("line"))
			require.Equal(t, float64(34), r.ext("column"), "the o of oops")
			require.Contains(t, r.Errors[0].Message, "line 3, column 34")
			r = s.requireCode(t, admin, importMutation, M{"s": server, "j": `{"tools": [`}, "BAD_USER_INPUT")
			require.Contains(t, r.Errors[0].Message, "line 1, column 12")
			for _, doc := range []string{``, `{"tools": [{"description": "no name"}]}`, `{"tools": {"a": 1}}`, `{"nothing": true}`, `42`,
				`{"tools": [{"name": "a"}, {"name": "a"}]}`, `{"tools": [{"name": "a", "inputSchema": {"type": "array"}}]}`} {
				r := s.requireCode(t, admin, importMutation, M{"s": server, "j": doc}, "BAD_USER_INPUT")
				require.Equal(t, "toolsJson", r.ext("field"), "%s", doc)
			}
			require.Equal(t, len(before), len(tools()))
			s.requireCode(t, admin, importMutation, M{"s": missingID("McpServer"), "j": githubTools}, "NOT_FOUND")
		})

		t.Run("imports that would break parameter mappings", func(t *testing.T) {
			suite := s.createSuite(t, admin, "GitHub app")
			action, ap := s.createAction(t, admin, suite, "open_issue", param{"title", "STRING", true}, param{"milestone", "INTEGER", false})
			m := s.createMap(t, admin, suite, server)
			all := tools()
			issue := all["create_issue"]
			mapping := s.addMapping(t, admin, m, action, issue.S("id"))
			ids := map[string]string{}
			pd := s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on Tool { parameters { nodes { id name } } } } }`, M{"id": issue.S("id")})
			for _, p := range pd.L("node.parameters.nodes") {
				ids[p.S("name")] = p.S("id")
			}
			s.addParamMapping(t, admin, mapping, ap["title"], ids["title"])
			s.addParamMapping(t, admin, mapping, ap["milestone"], ids["milestone"]) // INTEGER -> NUMBER

			dropped := strings.Replace(githubTools, `"title": {"type": "string", "description": "Issue title"},`, ``, 1)
			r := s.requireCode(t, admin, importMutation, M{"s": server, "j": dropped}, "CONFLICT")
			require.Contains(t, r.Errors[0].Message, "create_issue.title")
			retyped := strings.Replace(githubTools, `"milestone": {"type": "number", "description": "Milestone number"}`, `"milestone": {"type": "string"}`, 1)
			r = s.requireCode(t, admin, importMutation, M{"s": server, "j": retyped}, "CONFLICT")
			require.Contains(t, r.Errors[0].Message, `"milestone"`)
			require.Equal(t, "NUMBER", params(tools()["create_issue"])["milestone"].S("type"), "nothing changed")
			// Retyping into a type the feed still fits is fine: INTEGER feeds INTEGER.
			fits := strings.Replace(githubTools, `"milestone": {"type": "number", "description": "Milestone number"}`, `"milestone": {"type": "integer", "description": "Milestone number"}`, 1)
			d := s.query(t, admin, importMutation, M{"s": server, "j": fits})
			require.Contains(t, d.Col("importMcpTools.updated", "name"), "create_issue")
			require.Equal(t, "INTEGER", params(tools()["create_issue"])["milestone"].S("type"))
		})

		t.Run("agents may not import", func(t *testing.T) {
			project := s.createProject(t, admin, "import-agent")
			_, agent := s.userWithToken(t, "import-agent", "AGENT", project)
			s.requireCode(t, agent, importMutation, M{"s": server, "j": githubTools}, "FORBIDDEN")
		})
	})
}

// TestTraceUploads covers uploadTraceEvents over the GraphQL multipart request
// spec: a stored trace, a refused one (first bad line named, nothing kept), the
// CSRF guard, length and size limits, replacement, and who may upload.
func TestTraceUploads(t *testing.T) {
	t.Parallel()
	eachCatalogDB(t, func(t *testing.T, s *catalogServer) {
		admin := s.AdminToken
		suite := s.createSuite(t, admin, "Browser")
		session := s.createSession(t, admin, suite)
		_, sessionUUID, _ := domain.ParseGlobalID(session)
		trace := `{"t": 0, "type": "click", "x": 10, "y": 20}` + "\r\n" + `{"t": 5, "type": "key", "key": "a"}` + "\n" + `{"t": 9, "type": "scroll"}`

		t.Run("stored", func(t *testing.T) {
			r := s.uploadTrace(t, admin, session, trace)
			require.Empty(t, r.Errors)
			var out struct {
				UploadTraceEvents struct {
					TraceSession struct {
						StoragePath string
						SizeBytes   int
						EventCount  int
						UploadedAt  string
					}
				}
			}
			require.NoError(t, json.Unmarshal(r.Data, &out))
			ts := out.UploadTraceEvents.TraceSession
			require.Equal(t, "sessions/"+sessionUUID+"/input_events.jsonl", ts.StoragePath)
			require.Equal(t, 3, ts.EventCount)
			require.NotEmpty(t, ts.UploadedAt)
			stored, err := os.ReadFile(filepath.Join(s.DataDir, ts.StoragePath))
			require.NoError(t, err)
			require.Equal(t, strings.ReplaceAll(trace, "\r\n", "\n")+"\n", string(stored), "clean JSONL: \\n endings, final newline")
			require.Equal(t, len(stored), ts.SizeBytes)
			require.Equal(t, []string{"sessions", "sessions/" + sessionUUID, "sessions/" + sessionUUID + "/input_events.jsonl"}, filesUnder(t, s.DataDir))
			d := s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on TraceSession { user { slug } suite { id } description storagePath eventCount } } }`, M{"id": session})
			require.Equal(t, "admin", d.S("node.user.slug"))
			require.Equal(t, suite, d.S("node.suite.id"))
			require.Equal(t, ts.StoragePath, d.S("node.storagePath"))
		})

		t.Run("bad line 3 leaves nothing", func(t *testing.T) {
			fresh := s.createSession(t, admin, suite)
			_, freshUUID, _ := domain.ParseGlobalID(fresh)
			for _, tc := range []struct {
				content string
				line    int
			}{
				{"{\"a\": 1}\n{\"b\": 2}\n{\"c\": oops}\n{\"d\": 4}\n", 3},
				{"{\"a\": 1}\n\n{\"b\": 2}\n", 2},
				{"{\"a\": 1}\n[1, 2]\n", 2},
				{"not json\n", 1},
			} {
				r := s.uploadTrace(t, admin, fresh, tc.content)
				require.Equal(t, "BAD_USER_INPUT", r.code(), "%q: %+v", tc.content, r.Errors)
				require.Equal(t, "inputEvents", r.ext("field"))
				require.Equal(t, float64(tc.line), r.ext("line"))
				require.Contains(t, r.Errors[0].Message, fmt.Sprintf("line %d", tc.line))
			}
			r := s.uploadTrace(t, admin, fresh, "")
			require.Equal(t, "BAD_USER_INPUT", r.code())
			require.NotContains(t, filesUnder(t, s.DataDir), "sessions/"+freshUUID, "nothing is kept of a refused upload")
			require.Len(t, filesUnder(t, s.DataDir), 3, "only the first session's trace: %v", filesUnder(t, s.DataDir))
			require.True(t, s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on TraceSession { storagePath } } }`, M{"id": fresh}).Null("node.storagePath"))
			// Trailing blank lines are not records.
			r = s.uploadTrace(t, admin, fresh, "{\"a\": 1}\n\n\n")
			require.Empty(t, r.Errors)
		})

		t.Run("CSRF guard", func(t *testing.T) {
			fresh := s.createSession(t, admin, suite)
			r := s.uploadReq(t, admin, uploadTraceMutation, M{"in": M{"sessionId": fresh, "inputEvents": nil}},
				map[string]string{"Apollo-Require-Preflight": ""}, fileOf("variables.in.inputEvents", "e.jsonl", "{}\n"))
			require.Equal(t, http.StatusBadRequest, r.Status)
			require.Equal(t, "BAD_USER_INPUT", r.code())
			require.Contains(t, r.Errors[0].Message, "Apollo-Require-Preflight")
			require.True(t, s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on TraceSession { storagePath } } }`, M{"id": fresh}).Null("node.storagePath"))
			// Either header will do.
			r = s.uploadReq(t, admin, uploadTraceMutation, M{"in": M{"sessionId": fresh, "inputEvents": nil}},
				map[string]string{"Apollo-Require-Preflight": "", "X-Taskgraph-Upload": "1"}, fileOf("variables.in.inputEvents", "e.jsonl", "{}\n"))
			require.Empty(t, r.Errors)
			// Without a token it is UNAUTHENTICATED, like every operation, and
			// refused before the body is read.
			r = s.uploadReq(t, "", uploadTraceMutation, M{"in": M{"sessionId": fresh, "inputEvents": nil}}, nil,
				fileOf("variables.in.inputEvents", "e.jsonl", "{}\n"))
			require.Equal(t, "UNAUTHENTICATED", r.code())
			require.Equal(t, http.StatusUnauthorized, r.Status)
		})

		t.Run("replacing a trace", func(t *testing.T) {
			fresh := s.createSession(t, admin, suite)
			require.Empty(t, s.uploadTrace(t, admin, fresh, "{\"v\": 1}\n").Errors)
			r := s.uploadTrace(t, admin, fresh, "{\"v\": 2}\n{\"v\": 3}\n")
			require.Empty(t, r.Errors, "a trace no example uses may be replaced")
			require.Equal(t, 2, s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on TraceSession { eventCount } } }`, M{"id": fresh}).N("node.eventCount"))
			server := s.createMcpServer(t, admin, "replace-mcp")
			m := s.createMap(t, admin, suite, server)
			model := s.createModel(t, admin, "OTHER", "replace-model")
			s.createExample(t, admin, fresh, model, m)
			r = s.uploadTrace(t, admin, fresh, "{\"v\": 4}\n")
			require.Equal(t, "CONFLICT", r.code())
			require.Contains(t, r.Errors[0].Message, "1 example")
		})

		t.Run("who may upload", func(t *testing.T) {
			project := s.createProject(t, admin, "upload-agent")
			_, agent := s.userWithToken(t, "upload-agent", "AGENT", project)
			r := s.uploadTrace(t, agent, session, "{}\n")
			require.Equal(t, "FORBIDDEN", r.code())
			// Agents read sessions but see no other user.
			d := s.query(t, agent, `query($id: ID!) { node(id: $id) { ... on TraceSession { id user { id } } } }`, M{"id": session})
			require.Equal(t, session, d.S("node.id"))
			require.True(t, d.Null("node.user"))
			r = s.uploadTrace(t, admin, missingID("TraceSession"), "{}\n")
			require.Equal(t, "NOT_FOUND", r.code())
			require.Equal(t, "sessionId", r.ext("field"))
		})

		t.Run("JSON bodies keep the 1 MiB limit", func(t *testing.T) {
			big := strings.Repeat("x", 2<<20)
			r := s.do(t, admin, `query($x: String) { viewer { id } }`, M{"x": big})
			require.Equal(t, http.StatusRequestEntityTooLarge, r.Status)
			require.Equal(t, "LIMIT_EXCEEDED", r.code())
			// So do the operations and map parts of a multipart request, which
			// are read into memory; only files may be larger.
			fresh := s.createSession(t, admin, suite)
			r = s.uploadReq(t, admin, uploadTraceMutation+" # "+big, M{"in": M{"sessionId": fresh, "inputEvents": nil}}, nil,
				fileOf("variables.in.inputEvents", "e.jsonl", "{}\n"))
			require.Equal(t, http.StatusRequestEntityTooLarge, r.Status)
			require.Equal(t, "LIMIT_EXCEEDED", r.code())
			require.Contains(t, r.Errors[0].Message, "operations and map")
		})
	})
}

// TestUploadLimits runs a server with a 64 KiB upload limit: a multipart
// request larger than limit + body limit is refused before it is read; a file
// over the limit in a smaller request is refused by the service; a request
// without Content-Length is refused.
func TestUploadLimits(t *testing.T) {
	t.Parallel()
	eachCatalogDB(t, func(t *testing.T, s *catalogServer) {
		admin := s.AdminToken
		suite := s.createSuite(t, admin, "Limits")
		session := s.createSession(t, admin, suite)
		line := `{"type": "pad", "data": "` + strings.Repeat("z", 1000) + `"}` + "\n"

		r := s.uploadTrace(t, admin, session, strings.Repeat(line, 60)) // ~60 KiB: fits
		require.Empty(t, r.Errors)
		r = s.uploadTrace(t, admin, session, strings.Repeat(line, 100)) // ~100 KiB: over the file limit
		require.Equal(t, "LIMIT_EXCEEDED", r.code())
		require.Equal(t, "inputEvents", r.ext("field"))
		r = s.uploadTrace(t, admin, session, strings.Repeat(line, 2000)) // ~2 MiB: over limit + body limit
		require.Equal(t, http.StatusRequestEntityTooLarge, r.Status)
		require.Equal(t, "LIMIT_EXCEEDED", r.code())
		_, uuid, _ := domain.ParseGlobalID(session)
		stored, err := os.ReadFile(filepath.Join(s.DataDir, "sessions", uuid, "input_events.jsonl"))
		require.NoError(t, err)
		require.Equal(t, strings.Repeat(line, 60), string(stored), "refused uploads leave the stored trace alone")
		require.Len(t, filesUnder(t, filepath.Join(s.DataDir, "sessions", uuid)), 1, "no temporary files are left")

		// A streamed (chunked) multipart request has no length: refused.
		body, ctype := multipartBody(t, uploadTraceMutation, M{"in": M{"sessionId": session, "inputEvents": nil}},
			fileOf("variables.in.inputEvents", "e.jsonl", "{}\n"))
		req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", struct{ *os.File }{body}) // hides the length
		require.NoError(t, err)
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Apollo-Require-Preflight", "true")
		req.Header.Set("Authorization", "Bearer "+admin)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusLengthRequired, resp.StatusCode)
	}, "--max-upload-size", "64KiB")
}

// messagesJSONL is a messages.jsonl of three conversations; the second calls
// tool (which must be mapped).
func messagesJSONL(tool string) string {
	lines := []M{
		{"messages": []M{{"role": "system", "content": "You are an email assistant."}, {"role": "user", "content": "Say hi"}, {"role": "assistant", "content": "Hi!"}}},
		{"messages": []M{
			{"role": "user", "content": "Email bob"},
			{"role": "assistant", "content": nil, "tool_calls": []M{{"id": "c1", "type": "function", "function": M{"name": tool, "arguments": `{"recipient": "bob"}`}}}},
			{"role": "tool", "tool_call_id": "c1", "content": "sent"},
			{"role": "assistant", "content": "Done."},
		}},
		{"messages": []M{{"role": "user", "content": []M{{"type": "text", "text": "parts"}}}, {"role": "assistant", "content": "ok"}}, "metadata": M{"source": "test"}},
	}
	var b strings.Builder
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestExamples covers the example lifecycle: createExample, claimExample (one
// claimer, also under concurrency), completeExample with messages.jsonl
// (checked line by line against the map's tools), failExample, the examples
// connection, the JSONL export and deleting.
func TestExamples(t *testing.T) {
	t.Parallel()
	eachCatalogDB(t, func(t *testing.T, s *catalogServer) {
		admin := s.AdminToken
		suite := s.createSuite(t, admin, "Mail")
		otherSuite := s.createSuite(t, admin, "Calendar")
		server := s.createMcpServer(t, admin, "mail-tools")
		action, _ := s.createAction(t, admin, suite, "send")
		tool, _ := s.createTool(t, admin, server, "messages_send")
		s.createTool(t, admin, server, "messages_delete") // exists, but the map does not map it
		m := s.createMap(t, admin, suite, server)
		s.addMapping(t, admin, m, action, tool)
		otherMap := s.createMap(t, admin, otherSuite, server)
		model := s.createModel(t, admin, "ANTHROPIC", "claude")
		otherModel := s.createModel(t, admin, "OPENAI", "gpt")
		session := s.createSession(t, admin, suite)
		require.Empty(t, s.uploadTrace(t, admin, session, "{\"type\": \"click\"}\n").Errors)

		t.Run("createExample", func(t *testing.T) {
			d := s.query(t, admin, `mutation($in: CreateExampleInput!) { createExample(input: $in) { example { id status actionToolMapVersion
				modelConfiguration storagePath failureReason conversationCount createdAt updatedAt claimedAt finishedAt
				session { id } model { id } actionToolMap { id } createdBy { slug } claimedBy { id } } } }`,
				M{"in": M{"sessionId": session, "modelId": model, "actionToolMapId": m, "modelConfiguration": M{"temperature": 0.2, "routing": M{"tier": "fast"}}}})
			e := d.at("createExample.example")
			require.Equal(t, "PENDING", e.S("status"))
			require.Equal(t, 2, e.N("actionToolMapVersion"))
			require.Equal(t, 0.2, e.F("modelConfiguration.temperature"))
			require.Equal(t, "fast", e.S("modelConfiguration.routing.tier"))
			for _, f := range []string{"storagePath", "failureReason", "conversationCount", "claimedAt", "finishedAt", "claimedBy"} {
				require.True(t, e.Null(f), f)
			}
			require.Equal(t, session, e.S("session.id"))
			require.Equal(t, "admin", e.S("createdBy.slug"))
			plain := s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on Example { modelConfiguration } } }`, M{"id": s.createExample(t, admin, session, model, m)})
			require.Equal(t, map[string]any{}, plain.at("node.modelConfiguration").v, "modelConfiguration defaults to {}")

			create := `mutation($in: CreateExampleInput!) { createExample(input: $in) { example { id } } }`
			r := s.requireCode(t, admin, create, M{"in": M{"sessionId": session, "modelId": model, "actionToolMapId": otherMap}}, "BAD_USER_INPUT")
			require.Equal(t, "actionToolMapId", r.ext("field"), "the map must bind the session's suite")
			r = s.requireCode(t, admin, create, M{"in": M{"sessionId": session, "modelId": model, "actionToolMapId": m, "modelConfiguration": []int{1}}}, "BAD_USER_INPUT")
			require.Equal(t, "modelConfiguration", r.ext("field"))
			r = s.requireCode(t, admin, create, M{"in": M{"sessionId": session, "modelId": missingID("Model"), "actionToolMapId": m}}, "NOT_FOUND")
			require.Equal(t, "modelId", r.ext("field"))
		})

		t.Run("lifecycle", func(t *testing.T) {
			e := s.createExample(t, admin, session, model, m)
			r := s.completeExample(t, admin, e, messagesJSONL("messages_send"))
			require.Equal(t, "INVALID_TRANSITION", r.code(), "a PENDING example is claimed first")
			require.Equal(t, "PENDING", r.ext("from"))
			require.Equal(t, "COMPLETED", r.ext("to"))

			d := s.claim(t, admin, e)
			require.Equal(t, "PROCESSING", d.S("claimExample.example.status"))
			require.Equal(t, s.query(t, admin, `{ viewer { id } }`, nil).S("viewer.id"), d.S("claimExample.example.claimedBy.id"))
			require.NotEmpty(t, d.S("claimExample.example.claimedAt"))
			r = s.requireCode(t, admin, `mutation($id: ID!) { claimExample(input: {id: $id}) { example { id } } }`, M{"id": e}, "CONFLICT")
			require.Equal(t, "id", r.ext("field"))

			// A tool the map does not map, on line 2: refused, nothing kept.
			bad := messagesJSONL("messages_send") + messagesJSONL("messages_delete")
			r = s.completeExample(t, admin, e, bad)
			require.Equal(t, "BAD_USER_INPUT", r.code(), "%+v", r.Errors)
			require.Equal(t, "messages", r.ext("field"))
			require.Equal(t, float64(5), r.ext("line"))
			require.Contains(t, r.Errors[0].Message, `"messages_delete"`)
			for _, tc := range []struct {
				content string
				line    int
				says    string
			}{
				{`{"messages": [{"role": "robot", "content": "x"}]}`, 1, "robot"},
				{`{"messages": [{"role": "user", "content": "x"}]}` + "\n" + `{"messages": []}`, 2, "empty"},
				{`{"prompt": "x"}`, 1, "messages"},
				{`{"messages": [{"role": "user"}]}`, 1, "no content"},
				{`{"messages": [{"role": "user", "content": "x", "tool_calls": [{"function": {"name": "messages_send"}}]}]}`, 1, "only assistant"},
				{`{"messages": [{"role": "user", "content": 5}]}`, 1, "content"},
				{`{"messages": [{"role": "user", "content": "x"}]}` + "\n" + `{"messages": [{"role": "user", "content": "x"}]` + "\n", 2, "invalid JSON"},
			} {
				r := s.completeExample(t, admin, e, tc.content)
				require.Equal(t, "BAD_USER_INPUT", r.code(), "%s: %+v", tc.content, r.Errors)
				require.Equal(t, float64(tc.line), r.ext("line"), tc.content)
				require.Contains(t, r.Errors[0].Message, tc.says)
			}
			_, uuid, _ := domain.ParseGlobalID(e)
			require.NoDirExists(t, filepath.Join(s.DataDir, "examples", uuid))
			require.Equal(t, "PROCESSING", s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on Example { status } } }`, M{"id": e}).S("node.status"))

			r = s.completeExample(t, admin, e, messagesJSONL("messages_send"))
			require.Empty(t, r.Errors)
			var out struct {
				CompleteExample struct {
					Example struct {
						Status, StoragePath, FinishedAt string
						ConversationCount, SizeBytes    int
					}
				}
			}
			require.NoError(t, json.Unmarshal(r.Data, &out))
			ex := out.CompleteExample.Example
			require.Equal(t, "COMPLETED", ex.Status)
			require.Equal(t, "examples/"+uuid+"/messages.jsonl", ex.StoragePath)
			require.Equal(t, 3, ex.ConversationCount)
			stored, err := os.ReadFile(filepath.Join(s.DataDir, ex.StoragePath))
			require.NoError(t, err)
			require.Equal(t, messagesJSONL("messages_send"), string(stored))
			require.Equal(t, len(stored), ex.SizeBytes)

			r = s.completeExample(t, admin, e, messagesJSONL("messages_send"))
			require.Equal(t, "INVALID_TRANSITION", r.code())
			fail := `mutation($id: ID!, $r: String!) { failExample(input: {id: $id, reason: $r}) { example { status failureReason finishedAt } } }`
			r = s.requireCode(t, admin, fail, M{"id": e, "r": "too late"}, "INVALID_TRANSITION")
			require.Equal(t, "COMPLETED", r.ext("from"))
			s.requireCode(t, admin, `mutation($id: ID!) { claimExample(input: {id: $id}) { example { id } } }`, M{"id": e}, "INVALID_TRANSITION")

			f := s.createExample(t, admin, session, model, m)
			s.requireCode(t, admin, fail, M{"id": f, "r": "  "}, "BAD_USER_INPUT")
			s.claim(t, admin, f)
			d = s.query(t, admin, fail, M{"id": f, "r": "the model refused"})
			require.Equal(t, "FAILED", d.S("failExample.example.status"))
			require.Equal(t, "the model refused", d.S("failExample.example.failureReason"))
			require.NotEmpty(t, d.S("failExample.example.finishedAt"))
			g := s.createExample(t, admin, session, model, m)
			require.Equal(t, "FAILED", s.query(t, admin, fail, M{"id": g, "r": "bad trace"}).S("failExample.example.status"), "PENDING may fail too")
		})

		t.Run("one claimer", func(t *testing.T) {
			claimModel := s.createModel(t, admin, "MISTRAL", "claims")
			one := s.createExample(t, admin, session, claimModel, m)
			const claimers = 8
			var (
				wg      sync.WaitGroup
				mu      sync.Mutex
				won     int
				codes   []string
				claimed = map[string]int{}
			)
			for i := 0; i < claimers; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := s.post(admin, `mutation($id: ID!) { claimExample(input: {id: $id}) { example { id } } }`, M{"id": one})
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						codes = append(codes, err.Error())
						return
					}
					if len(r.Errors) == 0 {
						won++
					} else {
						codes = append(codes, r.code())
					}
				}()
			}
			wg.Wait()
			require.Equal(t, 1, won, "exactly one claimer gets the example: %v", codes)
			for _, c := range codes {
				require.Equal(t, "CONFLICT", c)
			}

			// Claiming the next PENDING example: 5 examples, 10 claimers.
			var want []string
			for i := 0; i < 5; i++ {
				want = append(want, s.createExample(t, admin, session, claimModel, m))
			}
			nulls := 0
			for i := 0; i < 10; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := s.post(admin, `mutation($m: ID!) { claimExample(input: {modelId: $m}) { example { id status } } }`, M{"m": claimModel})
					mu.Lock()
					defer mu.Unlock()
					if err != nil || len(r.Errors) > 0 {
						codes = append(codes, fmt.Sprint(err, r.Errors))
						return
					}
					var out struct {
						ClaimExample struct{ Example *struct{ ID, Status string } }
					}
					if json.Unmarshal(r.Data, &out) != nil || out.ClaimExample.Example == nil {
						nulls++
						return
					}
					claimed[out.ClaimExample.Example.ID]++
				}()
			}
			wg.Wait()
			require.Len(t, claimed, 5, "every example claimed: %v", codes)
			for id, n := range claimed {
				require.Equal(t, 1, n, "%s claimed once", id)
				require.Contains(t, want, id)
			}
			require.Equal(t, 5, nulls, "the other claimers find nothing waiting")
			d := s.query(t, admin, `mutation($m: ID!) { claimExample(input: {modelId: $m}) { example { id } } }`, M{"m": claimModel})
			require.True(t, d.Null("claimExample.example"))
		})

		t.Run("examples connection", func(t *testing.T) {
			d := s.query(t, admin, `query($m: ID!) { examples(filter: {status: [COMPLETED], modelId: $m}, first: 10) { totalCount nodes { status } } }`, M{"m": model})
			require.Equal(t, 1, d.N("examples.totalCount"))
			d = s.query(t, admin, `query($s: ID!) { examples(filter: {suiteId: $s, status: [FAILED]}) { totalCount } }`, M{"s": suite})
			require.Equal(t, 2, d.N("examples.totalCount"))
			d = s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on TraceSession { examples { totalCount } } } }`, M{"id": session})
			require.GreaterOrEqual(t, d.N("node.examples.totalCount"), 10)
		})

		t.Run("export", func(t *testing.T) {
			// One more completed example of the model, and one of another model.
			for _, md := range []string{model, otherModel} {
				e := s.createExample(t, admin, session, md, m)
				s.claim(t, admin, e)
				require.Empty(t, s.completeExample(t, admin, e, messagesJSONL("messages_send")).Errors)
			}
			get := func(token, query string) (*http.Response, []byte) {
				req, err := http.NewRequest(http.MethodGet, s.URL+"/export/examples.jsonl?"+query, nil)
				require.NoError(t, err)
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				var b strings.Builder
				sc := bufio.NewScanner(resp.Body)
				sc.Buffer(make([]byte, 1<<20), 1<<20)
				var raw []byte
				for sc.Scan() {
					b.Write(sc.Bytes())
					b.WriteByte('\n')
				}
				require.NoError(t, sc.Err())
				raw = []byte(b.String())
				return resp, raw
			}
			resp, body := get(admin, "suite="+suite+"&model="+model)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			require.Equal(t, "application/jsonl", resp.Header.Get("Content-Type"))
			// A JSONL reader takes it line by line: every line one conversation.
			sc := bufio.NewScanner(strings.NewReader(string(body)))
			n := 0
			for sc.Scan() {
				var conv struct {
					Messages []struct{ Role string } `json:"messages"`
				}
				require.NoError(t, json.Unmarshal(sc.Bytes(), &conv), "line %d: %s", n+1, sc.Text())
				require.NotEmpty(t, conv.Messages)
				n++
			}
			require.Equal(t, 6, n, "two completed examples of the model, three conversations each")
			_, body = get(admin, "suite="+suite)
			require.Equal(t, 9, strings.Count(string(body), "\n"), "every model")
			_, body = get(admin, "model="+otherModel)
			require.Equal(t, 3, strings.Count(string(body), "\n"))
			_, body = get(admin, "suite="+otherSuite)
			require.Empty(t, body)

			project := s.createProject(t, admin, "export-agent")
			_, agent := s.userWithToken(t, "export-agent", "AGENT", project)
			resp, _ = get(agent, "suite="+suite)
			require.Equal(t, http.StatusOK, resp.StatusCode, "reading the catalog is allowed to agents")
			for _, tc := range []struct {
				token, query string
				status       int
				code         string
			}{
				{"", "suite=" + suite, http.StatusUnauthorized, "UNAUTHENTICATED"},
				{"tg_bad", "suite=" + suite, http.StatusUnauthorized, "UNAUTHENTICATED"},
				{admin, "suite=" + missingID("Suite"), http.StatusNotFound, "NOT_FOUND"},
				{admin, "model=" + suite, http.StatusNotFound, "NOT_FOUND"},
				{admin, "suite=garbage", http.StatusBadRequest, "BAD_USER_INPUT"},
			} {
				resp, body := get(tc.token, tc.query)
				require.Equal(t, tc.status, resp.StatusCode, "%s: %s", tc.query, body)
				var e gqlResponse
				require.NoError(t, json.Unmarshal(body, &e))
				require.Equal(t, tc.code, e.code())
			}
			// A 100 KB value is not echoed back whole.
			resp, body = get(admin, "suite="+strings.Repeat("x", 100_000))
			require.Equal(t, http.StatusBadRequest, resp.StatusCode)
			require.Less(t, len(body), 1000, "the 400 repeats the value whole: %d bytes", len(body))
		})

		t.Run("deleting", func(t *testing.T) {
			r := s.do(t, admin, `mutation($id: ID!) { deleteModel(input: {id: $id}) { deletedId } }`, M{"id": model})
			require.Equal(t, "CONFLICT", r.code())
			require.Contains(t, r.Errors[0].Message, "examples")
			r = s.do(t, admin, `mutation($id: ID!) { deleteTraceSession(input: {id: $id}) { deletedId } }`, M{"id": session})
			require.Equal(t, "CONFLICT", r.code())
			// Delete every example of the session, then the session and its trace.
			d := s.query(t, admin, `query($id: ID!) { node(id: $id) { ... on TraceSession { examples(first: 100) { nodes { id storagePath } } } } }`, M{"id": session})
			for _, e := range d.L("node.examples.nodes") {
				s.query(t, admin, `mutation($id: ID!) { deleteExample(input: {id: $id}) { deletedId } }`, M{"id": e.S("id")})
				if !e.Null("storagePath") {
					require.NoFileExists(t, filepath.Join(s.DataDir, e.S("storagePath")))
				}
			}
			s.query(t, admin, `mutation($id: ID!) { deleteTraceSession(input: {id: $id}) { deletedId } }`, M{"id": session})
			_, uuid, _ := domain.ParseGlobalID(session)
			require.NoDirExists(t, filepath.Join(s.DataDir, "sessions", uuid))
			s.query(t, admin, `mutation($id: ID!) { deleteModel(input: {id: $id}) { deletedId } }`, M{"id": model})
		})
	})
}
