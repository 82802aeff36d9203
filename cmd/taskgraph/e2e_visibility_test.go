package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/taskgraph/taskgraph/graph"
)

// TestNestedFieldsKeepNodeVisibility walks every object field of the schema
// that returns a Node (directly, in a list, in a connection, or one level
// inside another object such as an event) from every entity a token can
// reach, and checks that node(id:) shows that token each entity the field
// returned: no nested field may reach past what node() allows. It runs for an
// AGENT token of one project whose user owns another project (and holds a
// token of it), and for a MEMBER who owns nothing of either.
func TestNestedFieldsKeepNodeVisibility(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		owner, ownerTok := s.member(t, "vowner")
		a := s.createProject(t, ownerTok, "vis-a")
		b := s.createProject(t, ownerTok, "vis-b")
		_, agentTok := s.tokenFor(t, owner, "AGENT", a)
		s.tokenFor(t, owner, "AGENT", b) // the owner's token of b: listed to a's agent through viewer.apiTokens
		_, foreignTok := s.member(t, "vstranger")
		seedVisible(t, s, ownerTok, agentTok, a)
		seedVisible(t, s, ownerTok, "", b)

		w := newWalker(t, s)
		for name, tok := range map[string]string{"agent of a": agentTok, "foreign member": foreignTok} {
			t.Run(name, func(t *testing.T) {
				leaks := w.walk(t, tok)
				require.Empty(t, leaks, "nested fields that show what node() hides")
			})
		}
	})
}

// tokenFor creates a token of role for an existing user.
func (s *testServer) tokenFor(t testing.TB, userID, role, projectID string) (string, string) {
	t.Helper()
	in := M{"userId": userID, "name": role + "-" + projectID[:6], "role": role}
	if projectID != "" {
		in["projectId"] = projectID
	}
	d := s.query(t, s.AdminToken, `mutation($in: CreateApiTokenInput!) { createApiToken(input: $in) { token apiToken { id } } }`, M{"in": in})
	return d.S("createApiToken.apiToken.id"), d.S("createApiToken.token")
}

// seedVisible gives a project one of most things: tasks with links, impacts,
// a block, an idea, a template, a list with a run, an agent (claimed with
// agentTok when given) with heartbeats, log lines and a test result.
func seedVisible(t *testing.T, s *testServer, tok, agentTok, project string) {
	t.Helper()
	t1 := s.createTask(t, tok, project, "one", M{"codebaseTests": []string{"go test"},
		"fileImpacts": []M{{"filePath": "a.go", "operation": "UPDATE"}}})
	t2 := s.createTask(t, tok, project, "two", M{"fileImpacts": []M{{"filePath": "a.go", "operation": "UPDATE"}}})
	s.link(t, tok, t2, t1, "DEPENDS_ON")
	s.query(t, tok, `mutation($in: CreateTaskBlockInput!) { createTaskBlock(input: $in) { block { id } } }`,
		M{"in": M{"taskId": t2, "blockType": "MANUAL", "reason": "waiting"}})
	s.query(t, tok, `mutation($in: CreateIdeaInput!) { createIdea(input: $in) { idea { id } } }`,
		M{"in": M{"projectId": project, "name": "an idea", "slug": "an-idea"}})
	s.query(t, tok, `mutation($in: CreateTaskTemplateInput!) { createTaskTemplate(input: $in) { taskTemplate { id } } }`,
		M{"in": M{"name": "tpl", "category": "TASK", "scope": "PROJECT", "projectId": project}})
	list := s.createList(t, tok, project, "l", t1, t2)
	run := s.query(t, tok, `mutation($in: StartExecutionRunInput!) { startExecutionRun(input: $in) { run { id } } }`,
		M{"in": M{"taskListId": list}}).S("startExecutionRun.run.id")
	if agentTok == "" {
		return
	}
	agent := s.query(t, agentTok, claimMutation, M{"in": M{"runId": run, "hostname": "h", "processId": "1"}}).S("claimTask.agent.id")
	s.query(t, agentTok, `mutation($in: HeartbeatInput!) { heartbeat(input: $in) { directive } }`,
		M{"in": M{"agentId": agent, "progressPercent": 5, "currentStep": "start"}})
	s.query(t, agentTok, `mutation($in: AppendExecutionLogInput!) { appendExecutionLog(input: $in) { execution { id } } }`,
		M{"in": M{"agentId": agent, "lines": []string{"hello"}}})
	s.query(t, agentTok, `mutation($in: RecordTestResultInput!) { recordTestResult(input: $in) { testResult { id } } }`,
		M{"in": M{"agentId": agent, "level": "CODEBASE", "testIndex": 0, "testName": "go test", "status": "PASSED"}})
}

// walker explores the schema's Node-returning fields from what a token reaches.
type walker struct {
	s      *testServer
	schema *ast.Schema
	nodes  map[string]bool // the names of the types that implement Node
}

func newWalker(t *testing.T, s *testServer) *walker {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	w := &walker{s: s, schema: schema, nodes: map[string]bool{}}
	for _, d := range schema.GetPossibleTypes(schema.Types["Node"]) {
		w.nodes[d.Name] = true
	}
	require.NotEmpty(t, w.nodes)
	return w
}

// selection is the selection of field f that reaches Node values: the value
// itself when it is a Node, the nodes of a connection, or (depth > 0) the
// Node fields of another object. ok is false when nothing in it reaches a
// Node or the field needs arguments the walk cannot give.
func (w *walker) selection(f *ast.FieldDefinition, depth int) (string, bool) {
	for _, a := range f.Arguments {
		if a.Type.NonNull && a.DefaultValue == nil {
			return "", false
		}
	}
	named := w.schema.Types[f.Type.Name()]
	if named == nil {
		return "", false
	}
	args := ""
	if f.Arguments.ForName("first") != nil {
		args = "(first: 20)"
	}
	if w.nodes[named.Name] || (named.Kind == ast.Interface && named.Name == "Node") {
		return args + " { __typename ... on Node { id } }", true
	}
	if nodes := named.Fields.ForName("nodes"); nodes != nil && strings.HasSuffix(named.Name, "Connection") {
		inner, ok := w.selection(nodes, depth)
		return args + " { nodes" + inner + " }", ok
	}
	if depth == 0 || (named.Kind != ast.Object && named.Kind != ast.Interface) {
		return "", false
	}
	var parts []string
	for _, g := range named.Fields {
		if strings.HasPrefix(g.Name, "__") {
			continue
		}
		if sel, ok := w.selection(g, depth-1); ok {
			parts = append(parts, g.Name+sel)
		}
	}
	if len(parts) == 0 {
		return "", false
	}
	return args + " { " + strings.Join(parts, " ") + " }", true
}

// reached is a Node value found under an alias.
type reached struct{ typ, id string }

// collect gathers every Node value ({__typename, id}) inside v.
func (w *walker) collect(v any, out *[]reached) {
	switch x := v.(type) {
	case map[string]any:
		if tn, ok := x["__typename"].(string); ok && w.nodes[tn] {
			if id, ok := x["id"].(string); ok {
				*out = append(*out, reached{tn, id})
			}
		}
		for _, e := range x {
			w.collect(e, out)
		}
	case []any:
		for _, e := range x {
			w.collect(e, out)
		}
	}
}

// fieldsOf builds the aliased selections of every Node-reaching field of
// type typ, and the field each alias stands for.
func (w *walker) fieldsOf(typ string) (string, []string) {
	var parts, names []string
	for _, f := range w.schema.Types[typ].Fields {
		if strings.HasPrefix(f.Name, "__") {
			continue
		}
		if sel, ok := w.selection(f, 1); ok {
			parts = append(parts, fmt.Sprintf("f%d: %s%s", len(names), f.Name, sel))
			names = append(names, f.Name)
		}
	}
	return strings.Join(parts, " "), names
}

// walk explores from the root fields and returns each leak as
// "Type.field -> LeakedType".
func (w *walker) walk(t *testing.T, token string) []string {
	t.Helper()
	rootSel, rootNames := w.fieldsOf("Query")
	leaks := map[string]bool{}
	seen := map[string]bool{}
	perType := map[string]int{}
	var frontier []reached
	visible := func(r reached) bool {
		return !w.s.query(t, token, `query($id: ID!) { node(id: $id) { id } }`, M{"id": r.id}).Null("node")
	}
	take := func(parent string, names []string, data map[string]any) {
		for i, name := range names {
			var got []reached
			w.collect(data[fmt.Sprintf("f%d", i)], &got)
			for _, r := range got {
				if seen[r.id] {
					continue
				}
				seen[r.id] = true
				if !visible(r) {
					leaks[fmt.Sprintf("%s.%s -> %s", parent, name, r.typ)] = true
					continue
				}
				if perType[r.typ] < 3 {
					perType[r.typ]++
					frontier = append(frontier, r)
				}
			}
		}
	}
	var root map[string]any
	require.NoError(t, json.Unmarshal(w.s.do(t, token, "{ "+rootSel+" }", nil).Data, &root))
	take("Query", rootNames, root)
	for len(frontier) > 0 {
		r := frontier[0]
		frontier = frontier[1:]
		sel, names := w.fieldsOf(r.typ)
		if sel == "" {
			continue
		}
		var out struct {
			Node map[string]any `json:"node"`
		}
		resp := w.s.do(t, token, `query($id: ID!) { node(id: $id) { ... on `+r.typ+` { `+sel+` } } }`, M{"id": r.id})
		require.NoError(t, json.Unmarshal(resp.Data, &out), "%s", r.typ)
		take(r.typ, names, out.Node)
	}
	covered := make([]string, 0, len(perType))
	for typ := range perType {
		covered = append(covered, typ)
	}
	sort.Strings(covered)
	t.Logf("walked %d entities of %d types: %v", len(seen), len(covered), covered)
	out := make([]string, 0, len(leaks))
	for l := range leaks {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}
