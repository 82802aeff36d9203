package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQuestionTaskAgent: a question names the task agent that asks it
// (askQuestion's taskAgentId); Question.taskAgent shows it and the task
// agent's questionsAsked counts it. A task agent that is missing, hidden, of
// another project or TERMINATED is refused on field taskAgentId, and a
// refused question counts for nothing.
func TestQuestionTaskAgent(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		e := newExecList(t, s, 1)
		task := e.add(t, "A", nil)
		register := func(token, project string) string {
			return s.query(t, token, `mutation($p: ID!) { registerTaskAgent(input: {projectId: $p, isEvaluationQueue: true}) { taskAgent { id questionsAsked } } }`,
				M{"p": project}).S("registerTaskAgent.taskAgent.id")
		}
		agent := register(e.token, e.project)
		asked := func(id string) int {
			return s.query(t, s.AdminToken, `query($id: ID!) { node(id: $id) { ... on TaskAgentInstance { questionsAsked } } }`, M{"id": id}).N("node.questionsAsked")
		}
		require.Equal(t, 0, asked(agent))

		const ask = `mutation($in: AskQuestionInput!) { askQuestion(input: $in) { question { id taskAgent { id questionsAsked } } } }`
		d := s.query(t, e.token, ask, M{"in": M{"taskId": task, "taskAgentId": agent, "questionType": "DECISION", "questionText": "merge?"}})
		q := d.S("askQuestion.question.id")
		require.Equal(t, agent, d.S("askQuestion.question.taskAgent.id"))
		require.Equal(t, 1, d.N("askQuestion.question.taskAgent.questionsAsked"))

		d = s.query(t, e.token, `query($id: ID!) { question(id: $id) { taskAgent { id status questionsAsked } } }`, M{"id": q})
		require.Equal(t, agent, d.S("question.taskAgent.id"))
		require.Equal(t, 1, d.N("question.taskAgent.questionsAsked"))
		require.Equal(t, 1, asked(agent))

		// Without taskAgentId: no task agent, nothing counted.
		d = s.query(t, e.token, ask, M{"in": M{"taskListId": e.list, "questionType": "DECISION", "questionText": "order?"}})
		require.Nil(t, d.at("askQuestion.question.taskAgent").v)
		d = s.query(t, e.token, `query($p: ID!) { questions(projectId: $p, first: 10) { nodes { id taskAgent { id } } } }`, M{"p": e.project})
		nodes := d.L("questions.nodes")
		require.Len(t, nodes, 2)
		require.Nil(t, nodes[0].at("taskAgent").v, "newest first: the question without a task agent")
		require.Equal(t, agent, nodes[1].S("taskAgent.id"))

		// Refusals name taskAgentId.
		other := newExecList(t, s, 1)
		otherAgent := register(other.token, other.project)
		terminated := s.query(t, e.token, `mutation($p: ID!, $l: ID!) { registerTaskAgent(input: {projectId: $p, taskListId: $l}) { taskAgent { id } } }`,
			M{"p": e.project, "l": e.list}).S("registerTaskAgent.taskAgent.id")
		s.query(t, e.token, `mutation($id: ID!) { terminateTaskAgent(input: {id: $id}) { taskAgent { status } } }`, M{"id": terminated})
		_, strangerTok := s.member(t, "qta-stranger")
		strangerProject := s.createProject(t, strangerTok, "qta-own")
		strangerTask := s.createTask(t, strangerTok, strangerProject, "mine", nil)
		for _, c := range []struct {
			name, token, task, taskAgent, code string
		}{
			{"missing", e.token, task, missingID("TaskAgentInstance"), "NOT_FOUND"},
			{"another kind", e.token, task, task, "NOT_FOUND"},
			{"malformed", e.token, task, "not-an-id", "BAD_USER_INPUT"},
			{"hidden from the caller", strangerTok, strangerTask, agent, "NOT_FOUND"},
			{"of another project", e.token, task, otherAgent, "BAD_USER_INPUT"},
			{"terminated", e.token, task, terminated, "BAD_USER_INPUT"},
		} {
			r := s.requireCode(t, c.token, ask, M{"in": M{"taskId": c.task, "taskAgentId": c.taskAgent, "questionType": "DECISION", "questionText": "x"}}, c.code)
			require.Equal(t, "taskAgentId", r.ext("field"), c.name)
		}
		require.Equal(t, 1, asked(agent))
		require.Equal(t, 0, asked(otherAgent))
		require.Equal(t, 0, asked(terminated))
		d = s.query(t, e.token, `query($p: ID!) { questions(projectId: $p, first: 10) { totalCount } }`, M{"p": e.project})
		require.Equal(t, 2, d.N("questions.totalCount"))
	})
}
