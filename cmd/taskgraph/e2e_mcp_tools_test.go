package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMCPEveryTool: every tool's operations run against the real schema
// (over POST /mcp with the TypeScript SDK client, on both databases): the
// reads, updates with their version check, links by display id, failing a
// task, lessons and session state with its compare-and-swap.
func TestMCPEveryTool(t *testing.T) {
	t.Parallel()
	node := mcpNode(t, "@modelcontextprotocol/sdk")
	eachDB(t, func(t *testing.T, s *testServer) {
		project := s.createProject(t, s.AdminToken, "tools")
		list := s.createList(t, s.AdminToken, project, "tools")
		_, agentToken := s.userWithToken(t, "tools-agent", "AGENT", project)
		lead := startMCPDriver(t, node, s, "http", s.AdminToken)
		agent := startMCPDriver(t, node, s, "http", agentToken)

		require.Equal(t, "tools", lead.ok("list_projects", M{"query": "tools"}).S("projects.0.slug"))
		a := lead.ok("create_task", M{"project": "tools", "title": "Schema first", "taskList": list, "priority": "P1"}).at("task")
		b := lead.ok("create_task", M{"project": project, "title": "Resolvers next", "taskList": list}).at("task")
		listed := lead.ok("list_tasks", M{"project": "tools", "status": []string{"PENDING"}, "taskList": list, "first": 1})
		require.Equal(t, 2, listed.N("totalCount"))
		require.True(t, listed.B("hasNextPage"))
		require.Equal(t, a.S("displayId"), listed.S("tasks.0.displayId"), "highest priority first")
		require.Equal(t, b.S("id"), lead.ok("list_tasks", M{"query": "resolvers"}).S("tasks.0.id"))

		updated := lead.ok("update_task", M{"displayId": a.S("displayId"), "expectedVersion": a.N("version"),
			"description": "Write graph/schema first.", "acceptanceCriteria": []string{"it parses"}}).at("task")
		require.Equal(t, a.N("version")+1, updated.N("version"))
		text := lead.fails("update_task", M{"id": a.S("id"), "expectedVersion": a.N("version"), "title": "stale"}, "VERSION_CONFLICT")
		require.Contains(t, text, "read it again")
		agent.fails("update_task", M{"id": a.S("id"), "title": "mine now"}, "FORBIDDEN")

		rel := lead.ok("link_tasks", M{"source": b.S("displayId"), "target": a.S("displayId"), "type": "DEPENDS_ON", "notes": "schema first"})
		require.Equal(t, a.S("id"), rel.S("relationship.target.id"))
		got := lead.ok("get_task", M{"id": b.S("displayId")}).at("task")
		require.Equal(t, a.S("displayId"), got.S("dependencies.0.displayId"))
		require.Equal(t, "Write graph/schema first.", lead.ok("get_task", M{"id": a.S("id")}).S("task.description"))
		lead.fails("get_task", M{"displayId": "TU-NOPE-TSK-999"}, "NOT_FOUND")

		plan := lead.ok("plan_waves", M{"taskList": list})
		require.Len(t, plan.L("waves"), 2)
		run := lead.ok("start_run", M{"taskList": list, "reason": "tools"}).S("run.id")
		lead.fails("start_run", M{"taskList": list}, "CONFLICT")
		claim := agent.ok("claim_task", M{"run": run})
		agentID := claim.S("agentId")
		require.Equal(t, a.S("displayId"), claim.S("task.displayId"))
		require.Equal(t, "NO_READY_TASK", agent.ok("claim_task", M{"run": run}).S("waitReason"), "the other waits on it")

		// Session state: created by the first save, then compare-and-swap.
		require.True(t, agent.ok("get_session_state", M{"agentId": agentID}).Null("session"))
		saved := agent.ok("save_session_state", M{"agentId": agentID, "expectedVersion": 0, "state": M{"step": 1}})
		session := saved.S("session.sessionId")
		require.Equal(t, 1, saved.N("session.version"))
		require.Equal(t, 2, agent.ok("save_session_state", M{"sessionId": session, "expectedVersion": 1, "patch": M{"note": "schema drafted"}}).N("session.version"))
		agent.fails("save_session_state", M{"agentId": agentID, "expectedVersion": 1, "state": M{"step": 9}}, "VERSION_CONFLICT")
		st := agent.ok("get_session_state", M{"sessionId": session}).at("session")
		require.Equal(t, 2, st.N("version"))
		require.Equal(t, "schema drafted", st.S("state.note"))
		require.Equal(t, 1, st.N("state.step"))

		// Lessons.
		agent.ok("record_lesson", M{"project": "tools", "sessionId": session, "lesson": "Run make generate after editing graphql schema files",
			"context": "changing the GraphQL schema", "whatWorked": "make generate", "toolName": "make", "confidence": 0.9})
		require.Equal(t, "make", agent.ok("search_lessons", M{"query": "graphql schema generate", "project": "tools"}).S("lessons.0.toolName"))

		failed := agent.ok("fail_task", M{"agentId": agentID, "error": "the schema does not parse", "retryable": false})
		require.Equal(t, "FAILED", failed.S("task.status"))
		agent.fails("heartbeat", M{"agentId": agentID}, "LEASE_LOST")
	})
}
