package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

const suggestionFields = `id status suggestedName groupingReason similarityScore triggeredBy
	suggestedTasks { id status } triggerTask { id } createdTaskList { id }
	breakdown { fileOverlap dependency category descriptionSimilarity component } expiresAt createdAt resolvedBy resolvedAt`

// groupingScene makes three tasks sharing two files, linked by DEPENDS_ON
// (b on a, c on b), and two unrelated tasks, all in the evaluation queue.
func groupingScene(t *testing.T, s *testServer, slug string) (project string, abc []string, others []string) {
	t.Helper()
	project = s.createProject(t, s.AdminToken, slug)
	shared := []string{"web/auth/login.go", "web/auth/session.go"}
	for _, title := range []string{"Add login form", "Validate tokens", "Expire sessions"} {
		abc = append(abc, s.createTask(t, s.AdminToken, project, title, M{"category": "FEATURE",
			"affectedFiles": shared, "inEvaluationQueue": true}))
	}
	s.link(t, s.AdminToken, abc[1], abc[0], "DEPENDS_ON")
	s.link(t, s.AdminToken, abc[2], abc[1], "DEPENDS_ON")
	others = append(others,
		s.createTask(t, s.AdminToken, project, "Render chart legend", M{"category": "BUG", "affectedFiles": []string{"ui/chart.ts"}, "inEvaluationQueue": true}),
		s.createTask(t, s.AdminToken, project, "Document backups", M{"category": "DOCS", "fileImpacts": []M{{"filePath": "docs/ops.md", "operation": "UPDATE"}}}))
	return project, abc, others
}

func ids(list []jv, path string) []string {
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = x.S(path)
	}
	return out
}

// TestGroupingSuggestAcceptReject: suggestGroupings finds exactly the group,
// with the breakdown the formulas give; accepting it makes the list, once.
func TestGroupingSuggestAcceptReject(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s, _ := startServerWith(t, url, serverOptions{noGroupingBackground: true})
		project, abc, _ := groupingScene(t, s, "grp")

		d := s.query(t, s.AdminToken, `query($p: ID!) { node(id: $p) { ... on Project { groupingWeights { fileOverlap dependency category descriptionSimilarity component } } } }`, M{"p": project})
		require.Equal(t, 0.3, d.F("node.groupingWeights.fileOverlap"))
		require.Equal(t, 0.1, d.F("node.groupingWeights.component"))

		d = s.query(t, s.AdminToken, `mutation($p: ID!) { suggestGroupings(input: {projectId: $p}) { suggestions { `+suggestionFields+` } } }`, M{"p": project})
		sugs := d.L("suggestGroupings.suggestions")
		require.Len(t, sugs, 1, "exactly one suggestion")
		sg := sugs[0]
		require.Equal(t, abc, ids(sg.L("suggestedTasks"), "id"))
		require.Equal(t, "PENDING", sg.S("status"))
		require.Equal(t, "MANUAL", sg.S("triggeredBy"))
		// Pairs a–b, a–c, b–c: same two files (Jaccard 1), same directory (1),
		// same category (1), two of three pairs linked (2/3), titles without a
		// common word (TF-IDF cosine 0).
		require.InDelta(t, 1.0, sg.F("breakdown.fileOverlap"), 1e-9)
		require.InDelta(t, 2.0/3, sg.F("breakdown.dependency"), 1e-9)
		require.InDelta(t, 1.0, sg.F("breakdown.category"), 1e-9)
		require.InDelta(t, 0.0, sg.F("breakdown.descriptionSimilarity"), 1e-9)
		require.InDelta(t, 1.0, sg.F("breakdown.component"), 1e-9)
		require.InDelta(t, 0.3*1+0.25*2.0/3+0.2*1+0.15*0+0.1*1, sg.F("similarityScore"), 1e-9)
		require.Contains(t, sg.S("groupingReason"), "file overlap")
		require.Contains(t, sg.S("groupingReason"), "dependency")
		require.Equal(t, "web/auth (3 tasks)", sg.S("suggestedName"))

		// The same set is not suggested again while PENDING.
		d = s.query(t, s.AdminToken, `mutation($p: ID!) { suggestGroupings(input: {projectId: $p}) { suggestions { id } } }`, M{"p": project})
		require.Empty(t, d.L("suggestGroupings.suggestions"))

		d = s.query(t, s.AdminToken, `mutation($id: ID!) { acceptGroupingSuggestion(input: {id: $id, name: "Auth"}) {
			suggestion { id status createdTaskList { id } resolvedBy resolvedAt }
			taskList { id name tasks { nodes { id status inEvaluationQueue } } } } }`, M{"id": sg.S("id")})
		require.Equal(t, "ACCEPTED", d.S("acceptGroupingSuggestion.suggestion.status"))
		require.Equal(t, "Auth", d.S("acceptGroupingSuggestion.taskList.name"))
		require.Equal(t, d.S("acceptGroupingSuggestion.taskList.id"), d.S("acceptGroupingSuggestion.suggestion.createdTaskList.id"))
		tasks := d.L("acceptGroupingSuggestion.taskList.tasks.nodes")
		require.ElementsMatch(t, abc, ids(tasks, "id"))
		for _, tk := range tasks {
			require.Equal(t, "PENDING", tk.S("status"))
			require.False(t, tk.B("inEvaluationQueue"))
		}
		s.requireCode(t, s.AdminToken, `mutation($id: ID!) { acceptGroupingSuggestion(input: {id: $id}) { suggestion { id } } }`, M{"id": sg.S("id")}, "CONFLICT")
		s.requireCode(t, s.AdminToken, `mutation($id: ID!) { rejectGroupingSuggestion(input: {id: $id}) { suggestion { id } } }`, M{"id": sg.S("id")}, "CONFLICT")

		// The events of both kinds are on the project's log.
		d = s.query(t, s.AdminToken, `query($p: ID!) { node(id: $p) { ... on Project { events(first: 100, types: [SUGGESTION_CREATED, SUGGESTION_RESOLVED]) {
			nodes { type ... on SuggestionCreated { suggestion { id } } ... on SuggestionResolved { status suggestion { id } } } } } } }`, M{"p": project})
		evs := d.L("node.events.nodes")
		require.Len(t, evs, 2)
		require.Equal(t, "SUGGESTION_CREATED", evs[0].S("type"))
		require.Equal(t, "ACCEPTED", evs[1].S("status"))
		require.Equal(t, sg.S("id"), evs[1].S("suggestion.id"))
	})
}

// TestGroupingSubsetAndReject: a subset accept is MODIFIED; reject; a task
// that joined a list meanwhile makes the suggestion CONFLICT; bad weights.
func TestGroupingSubsetAndReject(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s, _ := startServerWith(t, url, serverOptions{noGroupingBackground: true})
		project, abc, others := groupingScene(t, s, "grp")
		suggest := func() jv {
			d := s.query(t, s.AdminToken, `mutation($p: ID!) { suggestGroupings(input: {projectId: $p}) { suggestions { id } } }`, M{"p": project})
			require.Len(t, d.L("suggestGroupings.suggestions"), 1)
			return d.L("suggestGroupings.suggestions")[0]
		}
		sg := suggest()
		s.requireCode(t, s.AdminToken, `mutation($id: ID!, $t: [ID!]) { acceptGroupingSuggestion(input: {id: $id, taskIds: $t}) { suggestion { id } } }`,
			M{"id": sg.S("id"), "t": []string{others[0]}}, "BAD_USER_INPUT")
		s.query(t, s.AdminToken, `mutation($id: ID!) { rejectGroupingSuggestion(input: {id: $id, reason: "not now"}) { suggestion { id } } }`, M{"id": sg.S("id")})
		d := s.query(t, s.AdminToken, `query($id: ID!) { node(id: $id) { ... on GroupingSuggestion { status } } }`, M{"id": sg.S("id")})
		require.Equal(t, "REJECTED", d.S("node.status"))

		sg = suggest() // the set may be suggested again once the first is no longer PENDING
		d = s.query(t, s.AdminToken, `mutation($id: ID!, $t: [ID!]) { acceptGroupingSuggestion(input: {id: $id, taskIds: $t}) {
			suggestion { status } taskList { tasks { nodes { id status } } } } }`, M{"id": sg.S("id"), "t": abc[:2]})
		require.Equal(t, "MODIFIED", d.S("acceptGroupingSuggestion.suggestion.status"))
		require.ElementsMatch(t, abc[:2], ids(d.L("acceptGroupingSuggestion.taskList.tasks.nodes"), "id"))

		// A task of a PENDING suggestion joins a list: accepting is CONFLICT.
		x := s.createTask(t, s.AdminToken, project, "Refresh login cookie", M{"category": "FEATURE", "affectedFiles": []string{"web/auth/login.go", "web/auth/session.go"}})
		s.link(t, s.AdminToken, x, abc[2], "DEPENDS_ON")
		sg = suggest()
		s.createList(t, s.AdminToken, project, "other", x)
		s.requireCode(t, s.AdminToken, `mutation($id: ID!) { acceptGroupingSuggestion(input: {id: $id}) { suggestion { id } } }`, M{"id": sg.S("id")}, "CONFLICT")

		r := s.requireCode(t, s.AdminToken, `mutation($p: ID!) { setGroupingWeights(input: {projectId: $p, fileOverlap: 0.5, dependency: 0.5, category: 0.2, descriptionSimilarity: 0, component: 0}) { weights { fileOverlap } } }`,
			M{"p": project}, "BAD_USER_INPUT")
		require.Equal(t, "weights", r.ext("field"))
		s.requireCode(t, s.AdminToken, `mutation($p: ID!) { setGroupingWeights(input: {projectId: $p, fileOverlap: 1.2, dependency: -0.2, category: 0, descriptionSimilarity: 0, component: 0}) { weights { fileOverlap } } }`,
			M{"p": project}, "BAD_USER_INPUT")
		d = s.query(t, s.AdminToken, `mutation($p: ID!) { setGroupingWeights(input: {projectId: $p, fileOverlap: 0.6, dependency: 0.1, category: 0.1, descriptionSimilarity: 0.1, component: 0.1}) { weights { fileOverlap dependency } } }`, M{"p": project})
		require.Equal(t, 0.6, d.F("setGroupingWeights.weights.fileOverlap"))

		// Another member sees nothing of it.
		_, tok := s.member(t, "stranger")
		s.requireCode(t, tok, `mutation($id: ID!) { rejectGroupingSuggestion(input: {id: $id}) { suggestion { id } } }`, M{"id": sg.S("id")}, "NOT_FOUND")
		s.requireCode(t, tok, `mutation($p: ID!) { suggestGroupings(input: {projectId: $p}) { suggestions { id } } }`, M{"p": project}, "NOT_FOUND")
	})
}

// suggestionsTriggeredBy lists the project's suggestions whose trigger task is task.
func suggestionsTriggeredBy(t *testing.T, s *testServer, project, task string) []jv {
	d := s.query(t, s.AdminToken, `query($p: ID!) { node(id: $p) { ... on Project { groupingSuggestions(first: 100) {
		nodes { id status triggeredBy triggerTask { id } suggestedTasks { id } } } } } }`, M{"p": project})
	var out []jv
	for _, n := range d.L("node.groupingSuggestions.nodes") {
		if !n.Null("triggerTask") && n.S("triggerTask.id") == task {
			out = append(out, n)
		}
	}
	return out
}

// TestGroupingBackground: a task created into the queue that matches a group
// gets a TASK_CREATED suggestion by itself, once, with two replicas on
// PostgreSQL; a new dependency gives a DEPENDENCY_CHANGED one.
func TestGroupingBackground(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s := startServer(t, url)
		replicas := []*testServer{s}
		if strings.HasPrefix(url, "postgres") {
			replicas = append(replicas, startServer(t, url))
		}
		project, abc, _ := groupingScene(t, s, "bg")
		eventually(t, "a suggestion of the three", func() bool {
			d := s.query(t, s.AdminToken, `query($p: ID!) { node(id: $p) { ... on Project { groupingSuggestions(status: [PENDING]) { nodes { suggestedTasks { id } } } } } }`, M{"p": project})
			for _, n := range d.L("node.groupingSuggestions.nodes") {
				if slices.Equal(ids(n.L("suggestedTasks"), "id"), abc) {
					return true
				}
			}
			return false
		})
		// A matching task, created through the second replica when there is one.
		last := replicas[len(replicas)-1]
		d4 := last.createTask(t, s.AdminToken, project, "Lock accounts", M{"category": "FEATURE",
			"affectedFiles": []string{"web/auth/login.go", "web/auth/session.go"}, "inEvaluationQueue": true})
		var got []jv
		eventually(t, "a TASK_CREATED suggestion", func() bool { got = suggestionsTriggeredBy(t, s, project, d4); return len(got) > 0 })
		require.Equal(t, "TASK_CREATED", got[0].S("triggeredBy"))
		require.Contains(t, ids(got[0].L("suggestedTasks"), "id"), d4)

		// Later triggers are handled after it: once they show, the first is final.
		e1 := s.createTask(t, s.AdminToken, project, "Tune chart colours", M{"category": "REFACTOR", "affectedFiles": []string{"ui/theme/colors.ts"}})
		e2 := last.createTask(t, s.AdminToken, project, "Tune chart palette", M{"category": "REFACTOR", "affectedFiles": []string{"ui/theme/colors.ts"}})
		// (A group is attributed to the first new task it holds, when both
		// were handled together.)
		eventually(t, "a suggestion for the second pair", func() bool {
			return len(suggestionsTriggeredBy(t, s, project, e1))+len(suggestionsTriggeredBy(t, s, project, e2)) > 0
		})
		require.Len(t, suggestionsTriggeredBy(t, s, project, d4), 1, "handled once")
		// No two PENDING suggestions of one set.
		d := s.query(t, s.AdminToken, `query($p: ID!) { node(id: $p) { ... on Project { groupingSuggestions(status: [PENDING], first: 100) { totalCount nodes { suggestedTasks { id } } } } } }`, M{"p": project})
		seen := map[string]bool{}
		for _, n := range d.L("node.groupingSuggestions.nodes") {
			k := strings.Join(ids(n.L("suggestedTasks"), "id"), ",")
			require.False(t, seen[k], "a task set PENDING twice")
			seen[k] = true
		}

		// A new dependency between two candidates.
		f1 := s.createTask(t, s.AdminToken, project, "Rotate keys", M{"category": "INFRA"})
		f2 := s.createTask(t, s.AdminToken, project, "Audit rotation", M{"category": "INFRA"})
		s.query(t, s.AdminToken, `mutation($p: ID!) { setGroupingWeights(input: {projectId: $p, fileOverlap: 0.1, dependency: 0.5, category: 0.2, descriptionSimilarity: 0.1, component: 0.1}) { weights { dependency } } }`, M{"p": project})
		s.link(t, s.AdminToken, f2, f1, "BLOCKS")
		eventually(t, "a DEPENDENCY_CHANGED suggestion", func() bool {
			for _, n := range suggestionsTriggeredBy(t, s, project, f2) {
				if n.S("triggeredBy") == "DEPENDENCY_CHANGED" {
					return true
				}
			}
			return false
		})

		// Expiry by the sweep: a suggestion past its expiry becomes EXPIRED.
		q := `UPDATE grouping_suggestions SET expires_at = ? WHERE status = 'PENDING'`
		if strings.HasPrefix(url, "postgres") {
			q = `UPDATE grouping_suggestions SET expires_at = now() - interval '1 minute' WHERE status = 'PENDING' AND $1::int = 1`
			_, err := s.DB.SQL().Exec(q, 1)
			require.NoError(t, err)
		} else {
			_, err := s.DB.SQL().Exec(q, "2000-01-01 00:00:00")
			require.NoError(t, err)
		}
		eventually(t, "suggestions expired", func() bool {
			d := s.query(t, s.AdminToken, `query($p: ID!) { node(id: $p) { ... on Project { pending: groupingSuggestions(status: [PENDING]) { totalCount } expired: groupingSuggestions(status: [EXPIRED]) { totalCount } } } }`, M{"p": project})
			return d.N("node.pending.totalCount") == 0 && d.N("node.expired.totalCount") > 0
		})
	})
}

// TestGroupingTaskAgents: one live agent per list and per queue, heartbeats
// with directives, counters, the write-only token, and the sweep.
func TestGroupingTaskAgents(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s, _ := startServerWith(t, url, serverOptions{noGroupingBackground: true})
		project, _, _ := groupingScene(t, s, "agents")
		list := s.createList(t, s.AdminToken, project, "L")
		const fields = `id status isEvaluationQueue taskList { id } hasTelegramBotToken telegramChannelId tasksProcessed suggestionsMade errorCount lastError lastHeartbeatAt terminatedAt`
		reg := func(input M) gqlResponse {
			input["projectId"] = project
			return s.do(t, s.AdminToken, `mutation($i: RegisterTaskAgentInput!) { registerTaskAgent(input: $i) { taskAgent { `+fields+` } } }`, M{"i": input})
		}
		r := reg(M{"isEvaluationQueue": true, "telegramBotToken": "secret-token", "telegramChannelId": "@ops"})
		require.Empty(t, r.Errors)
		var q struct {
			RegisterTaskAgent struct {
				TaskAgent struct {
					ID                  string
					HasTelegramBotToken bool
					Status              string
				}
			}
		}
		require.NoError(t, decodeJSON(bytesReader(r.Data), &q))
		queueAgent := q.RegisterTaskAgent.TaskAgent.ID
		require.True(t, q.RegisterTaskAgent.TaskAgent.HasTelegramBotToken)
		require.NotContains(t, string(r.Data), "secret-token")
		require.Equal(t, "CONFLICT", reg(M{"isEvaluationQueue": true}).code())
		require.Equal(t, "BAD_USER_INPUT", reg(M{}).code())
		r = reg(M{"taskListId": list})
		require.Empty(t, r.Errors)
		require.Equal(t, "CONFLICT", reg(M{"taskListId": list}).code())

		hb := func(id string, processed int, errText any) jv {
			return s.query(t, s.AdminToken, `mutation($id: ID!, $n: Int, $e: String) { taskAgentHeartbeat(input: {id: $id, tasksProcessed: $n, error: $e}) { directive taskAgent { `+fields+` } } }`,
				M{"id": id, "n": processed, "e": errText})
		}
		hb(queueAgent, 2, nil)
		d := hb(queueAgent, 3, "telegram down")
		require.Equal(t, "CONTINUE", d.S("taskAgentHeartbeat.directive"))
		require.Equal(t, 5, d.N("taskAgentHeartbeat.taskAgent.tasksProcessed"))
		require.Equal(t, 1, d.N("taskAgentHeartbeat.taskAgent.errorCount"))
		require.Equal(t, "telegram down", d.S("taskAgentHeartbeat.taskAgent.lastError"))

		d = s.query(t, s.AdminToken, `mutation($p: ID!, $a: ID!) { suggestGroupings(input: {projectId: $p, taskAgentId: $a}) { suggestions { id taskAgent { id suggestionsMade } } } }`, M{"p": project, "a": queueAgent})
		require.Len(t, d.L("suggestGroupings.suggestions"), 1)
		require.Equal(t, 1, d.N("suggestGroupings.suggestions.0.taskAgent.suggestionsMade"))

		s.query(t, s.AdminToken, `mutation($id: ID!) { pauseTaskAgent(input: {id: $id}) { taskAgent { status } } }`, M{"id": queueAgent})
		require.Equal(t, "PAUSE", hb(queueAgent, 0, nil).S("taskAgentHeartbeat.directive"))
		s.requireCode(t, s.AdminToken, `mutation($id: ID!) { pauseTaskAgent(input: {id: $id}) { taskAgent { status } } }`, M{"id": queueAgent}, "INVALID_TRANSITION")
		s.query(t, s.AdminToken, `mutation($id: ID!) { resumeTaskAgent(input: {id: $id}) { taskAgent { status } } }`, M{"id": queueAgent})
		require.Equal(t, "CONTINUE", hb(queueAgent, 0, nil).S("taskAgentHeartbeat.directive"))
		d = s.query(t, s.AdminToken, `mutation($id: ID!) { terminateTaskAgent(input: {id: $id, reason: "done"}) { taskAgent { status terminatedAt } } }`, M{"id": queueAgent})
		require.Equal(t, "TERMINATED", d.S("terminateTaskAgent.taskAgent.status"))
		require.Equal(t, "CANCEL", hb(queueAgent, 0, nil).S("taskAgentHeartbeat.directive"))
		// The queue is free again.
		require.Empty(t, reg(M{"isEvaluationQueue": true}).Errors)

		d = s.query(t, s.AdminToken, `query($p: ID!) { node(id: $p) { ... on Project { taskAgents { id status } } } }`, M{"p": project})
		require.Len(t, d.L("node.taskAgents"), 3)
	})
}

// TestGroupingTaskAgentSweep: a silent task agent is terminated by the sweep.
func TestGroupingTaskAgentSweep(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s := startServer(t, url, "--heartbeat-interval", "100ms", "--missed-heartbeats", "2")
		project := s.createProject(t, s.AdminToken, "sweep")
		d := s.query(t, s.AdminToken, `mutation($p: ID!) { registerTaskAgent(input: {projectId: $p, isEvaluationQueue: true}) { taskAgent { id } } }`, M{"p": project})
		id := d.S("registerTaskAgent.taskAgent.id")
		eventually(t, "the silent agent terminated", func() bool {
			d := s.query(t, s.AdminToken, `query($id: ID!) { node(id: $id) { ... on TaskAgentInstance { status lastError } } }`, M{"id": id})
			return d.S("node.status") == "TERMINATED"
		})
	})
}

// TestGroupingStatements: suggestedTasks { fileImpacts } costs the same for
// 1 and 50 suggestions.
func TestGroupingStatements(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s, _ := startServerWith(t, url, serverOptions{noGroupingBackground: true})
		seed := func(slug string, pairs int) {
			p := s.createProject(t, s.AdminToken, slug)
			for i := 0; i < pairs; i++ {
				file := fmt.Sprintf("pkg%d/f.go", i)
				for _, title := range []string{fmt.Sprintf("alpha%d", i), fmt.Sprintf("beta%d", i)} {
					s.createTask(t, s.AdminToken, p, title, M{"category": "TASK", "fileImpacts": []M{{"filePath": file, "operation": "UPDATE"}}})
				}
			}
			d := s.query(t, s.AdminToken, `mutation($p: ID!) { suggestGroupings(input: {projectId: $p}) { suggestions { id } } }`, M{"p": p})
			require.Len(t, d.L("suggestGroupings.suggestions"), pairs)
		}
		seed("one", 1)
		seed("fifty", 50)
		const query = `query($slug: String!) { project(slug: $slug) { groupingSuggestions(first: 100) { nodes { id suggestedTasks { id fileImpacts { filePath } } } } } }`
		count := func(slug string) (int64, int) {
			var out struct {
				Project struct {
					GroupingSuggestions struct {
						Nodes []struct {
							SuggestedTasks []struct{ FileImpacts []struct{ FilePath string } }
						}
					}
				}
			}
			before := s.DB.Statements()
			s.mustDo(t, s.AdminToken, query, M{"slug": slug}, &out)
			n := 0
			for _, g := range out.Project.GroupingSuggestions.Nodes {
				require.Len(t, g.SuggestedTasks, 2)
				require.Len(t, g.SuggestedTasks[0].FileImpacts, 1)
				n++
			}
			return s.DB.Statements() - before, n
		}
		count("one")
		one, n1 := count("one")
		fifty, n50 := count("fifty")
		require.Equal(t, 1, n1)
		require.Equal(t, 50, n50)
		require.Equal(t, one, fifty, "statements for 1 vs 50 suggestions")
		t.Logf("groupingSuggestions { suggestedTasks { fileImpacts } }: %d statements", one)
	})
}

// TestGroupingIdeaStages: the idea lifecycle (advanceIdea).
func TestGroupingIdeaStages(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		project := s.createProject(t, s.AdminToken, "ideas")
		d := s.query(t, s.AdminToken, `mutation($p: ID!) { createIdea(input: {projectId: $p, name: "Lander", slug: "lander"}) { idea { id lifecycleStage } } }`, M{"p": project})
		id := d.S("createIdea.idea.id")
		require.Equal(t, "SPARK", d.S("createIdea.idea.lifecycleStage"))
		advance := func(to string) gqlResponse {
			return s.do(t, s.AdminToken, `mutation($id: ID!, $to: IdeaStage!) { advanceIdea(input: {id: $id, to: $to}) { idea { lifecycleStage } } }`, M{"id": id, "to": to})
		}
		require.Empty(t, advance("CLARIFY").Errors)
		require.Empty(t, advance("PLANNED").Errors, "forward by several stages")
		r := advance("RESEARCH")
		require.Equal(t, "INVALID_TRANSITION", r.code())
		require.Equal(t, "PLANNED", r.ext("from"))
		require.Equal(t, "INVALID_TRANSITION", advance("PLANNED").code())
		require.Empty(t, advance("ARCHIVED").Errors)
		require.Equal(t, "INVALID_TRANSITION", advance("SHIPPED").code())
		d = s.query(t, s.AdminToken, `query($id: ID!) { node(id: $id) { ... on Idea { lifecycleStage } } }`, M{"id": id})
		require.Equal(t, "ARCHIVED", d.S("node.lifecycleStage"))
		_, tok := s.member(t, "outsider")
		require.Equal(t, "NOT_FOUND", s.do(t, tok, `mutation($id: ID!) { advanceIdea(input: {id: $id, to: SHIPPED}) { idea { id } } }`, M{"id": id}).code())
	})
}
