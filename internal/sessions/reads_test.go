package sessions_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
	"github.com/taskgraph/taskgraph/internal/sessions"
)

// runWork is a task list of the bundle's project with two tasks and a
// started run whose first task a build agent claimed.
type runWork struct {
	run          *domain.ExecutionRun
	agent        *domain.BuildAgent
	claimed      *domain.Task // the agent's task
	other        *domain.Task // the list's other task
	foreignTask  *domain.Task // a task of another project
	foreignRun   *domain.ExecutionRun
	foreignOwner string
}

// startRun makes a list of tasks in a project of owner, starts its run and
// claims one of them as the admin.
func (b *bundle) startRun(owner string) (*domain.ExecutionRun, *domain.ClaimResult, []*domain.Task) {
	b.t.Helper()
	ctx := as(b.admin)
	list, err := b.core.Lists.CreateTaskList(ctx, domain.CreateTaskListInput{ProjectID: owner, Name: "L"})
	require.NoError(b.t, err)
	var tasks []*domain.Task
	for _, title := range []string{"first", "second"} {
		tk, err := b.core.Tasks.CreateTask(ctx, domain.CreateTaskInput{ProjectID: owner, Title: title, TaskListID: ptr(list.GlobalID())})
		require.NoError(b.t, err)
		tasks = append(tasks, tk)
	}
	run, err := b.core.Runs.StartExecutionRun(ctx, domain.StartExecutionRunInput{TaskListID: list.GlobalID()})
	require.NoError(b.t, err)
	claim, err := b.core.Runs.ClaimTask(ctx, domain.ClaimTaskInput{RunID: run.GlobalID()})
	require.NoError(b.t, err)
	require.NotNil(b.t, claim.Agent, "claimed: %+v", claim.WaitReason)
	return run, claim, tasks
}

func (b *bundle) work() *runWork {
	b.t.Helper()
	run, claim, tasks := b.startRun(b.project)
	w := &runWork{run: run, agent: claim.Agent, claimed: claim.Task}
	for _, tk := range tasks {
		if tk.ID != claim.Task.ID {
			w.other = tk
		}
	}
	foreign, err := b.core.Projects.CreateProject(as(b.other), domain.CreateProjectInput{Name: "Elsewhere", Slug: "elsewhere"})
	require.NoError(b.t, err)
	w.foreignOwner = foreign.GlobalID()
	fr, fclaim, _ := b.startRun(foreign.GlobalID())
	w.foreignRun, w.foreignTask = fr, fclaim.Task
	return w
}

// TestAgentSessionsByTaskAndRun: agentSessions(taskId:, runId:) keeps the
// sessions of a task (opened with taskId or for its agent) or of a run
// (opened for one of its agents), with the status filter and paging; a
// task or run of another project, an id of another kind or an unknown id is
// NOT_FOUND naming the argument, a malformed one BAD_USER_INPUT.
func TestAgentSessionsByTaskAndRun(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		w := b.work()
		ctx := as(b.agent)
		open := func(in domain.CreateAgentSessionInput) *domain.AgentSession {
			t.Helper()
			in.ProjectID, in.Mission = b.project, "m"
			s, err := b.svc.CreateAgentSession(ctx, in)
			require.NoError(t, err)
			return s
		}
		// The agent was claimed as the admin: only its claimer opens its
		// session (the agent calls' fence).
		_, err := b.svc.CreateAgentSession(ctx, domain.CreateAgentSessionInput{ProjectID: b.project, Mission: "m",
			AgentID: ptr(w.agent.GlobalID())})
		require.Equal(t, domain.CodeLeaseLost, domain.ErrorCode(err))
		ofAgent, err := b.svc.CreateAgentSession(as(b.admin), domain.CreateAgentSessionInput{ProjectID: b.project, Mission: "m",
			AgentID: ptr(w.agent.GlobalID())})
		require.NoError(t, err)
		ofTask := open(domain.CreateAgentSessionInput{TaskID: ptr(w.claimed.GlobalID())})
		ofOther := open(domain.CreateAgentSessionInput{TaskID: ptr(w.other.GlobalID())})
		loose := open(domain.CreateAgentSessionInput{})
		require.Equal(t, w.run.ID, *ofAgent.RunID)
		_, err = b.svc.SetAgentSessionStatus(ctx, domain.SetAgentSessionStatusInput{ID: ofTask.GlobalID(), Status: domain.SessionInProgress})
		require.NoError(t, err)

		list := func(args sessions.AgentSessionsArgs) []string {
			t.Helper()
			args.ProjectID = b.project
			pg, err := b.svc.AgentSessions(ctx, args)
			require.NoError(t, err)
			var ids []string
			for _, s := range pg.Items {
				ids = append(ids, s.ID)
			}
			return ids
		}
		task, runID := ptr(w.claimed.GlobalID()), ptr(w.run.GlobalID())
		require.Equal(t, []string{ofTask.ID, ofAgent.ID}, list(sessions.AgentSessionsArgs{TaskID: task}), "newest first")
		require.Equal(t, []string{ofOther.ID}, list(sessions.AgentSessionsArgs{TaskID: ptr(w.other.GlobalID())}))
		require.Equal(t, []string{ofAgent.ID}, list(sessions.AgentSessionsArgs{RunID: runID}))
		require.Equal(t, []string{ofAgent.ID}, list(sessions.AgentSessionsArgs{TaskID: task, RunID: runID}))
		require.Empty(t, list(sessions.AgentSessionsArgs{TaskID: ptr(w.other.GlobalID()), RunID: runID}))
		require.Equal(t, []string{ofTask.ID}, list(sessions.AgentSessionsArgs{TaskID: task, Status: []domain.AgentSessionStatus{domain.SessionInProgress}}))
		require.Equal(t, []string{loose.ID, ofOther.ID, ofTask.ID, ofAgent.ID}, list(sessions.AgentSessionsArgs{}))

		// Paging within the filter.
		one := 1
		pg, err := b.svc.AgentSessions(ctx, sessions.AgentSessionsArgs{ProjectID: b.project, TaskID: task, Page: domain.PageArgs{First: &one}})
		require.NoError(t, err)
		require.True(t, pg.HasNextPage)
		total, err := pg.Total(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, total)
		require.Equal(t, []string{ofAgent.ID}, list(sessions.AgentSessionsArgs{TaskID: task, Page: domain.PageArgs{After: &pg.Cursors[0]}}))

		for _, c := range []struct {
			args        sessions.AgentSessionsArgs
			code        domain.Code
			field       string
			description string
		}{
			{sessions.AgentSessionsArgs{TaskID: ptr(w.foreignTask.GlobalID())}, domain.CodeNotFound, "taskId", "a task of another project"},
			{sessions.AgentSessionsArgs{RunID: ptr(w.foreignRun.GlobalID())}, domain.CodeNotFound, "runId", "a run of another project"},
			{sessions.AgentSessionsArgs{TaskID: runID}, domain.CodeNotFound, "taskId", "a run's id as taskId"},
			{sessions.AgentSessionsArgs{RunID: task}, domain.CodeNotFound, "runId", "a task's id as runId"},
			{sessions.AgentSessionsArgs{RunID: ptr(domain.GlobalID(domain.KindExecutionRun, "00000000-0000-4000-8000-000000000000"))}, domain.CodeNotFound, "runId", "an unknown run"},
			{sessions.AgentSessionsArgs{TaskID: ptr("nope")}, domain.CodeBadUserInput, "taskId", "not an id"},
			{sessions.AgentSessionsArgs{Status: append(domain.AgentSessionStatuses, domain.SessionPending)}, domain.CodeBadUserInput, "status", "too many statuses"},
		} {
			c.args.ProjectID = b.project
			_, err := b.svc.AgentSessions(ctx, c.args)
			requireCode(t, err, c.code, c.field)
		}

		// Another member sees neither the project nor, so, its filters.
		_, err = b.svc.AgentSessions(as(b.other), sessions.AgentSessionsArgs{ProjectID: b.project, TaskID: task})
		requireCode(t, err, domain.CodeNotFound, "projectId")
		// The other project's owner lists its run's sessions, not these.
		pg, err = b.svc.AgentSessions(as(b.other), sessions.AgentSessionsArgs{ProjectID: w.foreignOwner, RunID: ptr(w.foreignRun.GlobalID())})
		require.NoError(t, err)
		require.Empty(t, pg.Items)
	})
}

// TestLessonsOfSession: AgentSession.lessons pages the lessons recorded in
// the session, oldest first; a lesson recorded again (deduplicated) stays
// with its first session.
func TestLessonsOfSession(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		ctx := as(b.agent)
		s, other := b.session(""), b.session("")
		record := func(sess *domain.AgentSession, text string) *domain.Lesson {
			t.Helper()
			l, err := b.svc.RecordLesson(ctx, domain.RecordLessonInput{SessionID: ptr(sess.GlobalID()), Context: "c",
				WhatWorked: "w", Lesson: text, Confidence: 0.5})
			require.NoError(t, err)
			return l
		}
		a, bb, c := record(s, "first"), record(s, "second"), record(s, "third")
		record(other, "elsewhere")
		require.Equal(t, a.ID, record(other, "first").ID, "deduplicated: still the first session's")
		_, err := b.svc.RecordLesson(ctx, domain.RecordLessonInput{ProjectID: ptr(b.project), Context: "c", WhatWorked: "w",
			Lesson: "no session", Confidence: 0.5})
		require.NoError(t, err)

		two := 2
		pg, err := b.svc.LessonsOfSession(ctx, s.ID, domain.PageArgs{First: &two})
		require.NoError(t, err)
		require.Len(t, pg.Items, 2)
		require.Equal(t, []string{a.ID, bb.ID}, []string{pg.Items[0].ID, pg.Items[1].ID}, "oldest first")
		require.True(t, pg.HasNextPage)
		total, err := pg.Total(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, total)
		rest, err := b.svc.LessonsOfSession(ctx, s.ID, domain.PageArgs{After: &pg.Cursors[1]})
		require.NoError(t, err)
		require.Len(t, rest.Items, 1)
		require.Equal(t, c.ID, rest.Items[0].ID)

		pg, err = b.svc.LessonsOfSession(ctx, other.ID, domain.PageArgs{})
		require.NoError(t, err)
		require.Len(t, pg.Items, 1)
		require.Equal(t, "elsewhere", pg.Items[0].Lesson)
	})
}
