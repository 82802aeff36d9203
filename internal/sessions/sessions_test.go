package sessions_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

func TestStateCompareAndSwap(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		s := b.session(`{"a":1,"nested":{"x":1,"y":2}}`)
		require.Equal(t, 1, s.StateVersion)
		ctx := as(b.agent)

		// Concurrent saves from version 1: exactly one wins.
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, errs[i] = b.svc.SaveAgentSessionState(ctx, domain.SaveAgentSessionStateInput{
					SessionID: s.GlobalID(), ExpectedVersion: 1, State: js(fmt.Sprintf(`{"writer":%d}`, i))})
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
				continue
			}
			e := requireCode(t, err, domain.CodeVersionConflict, "expectedVersion")
			require.Equal(t, 2, e.Details["currentVersion"])
		}
		require.Equal(t, 1, wins)
		pg, err := b.svc.States(ctx, s.ID, domain.PageArgs{})
		require.NoError(t, err)
		require.Len(t, pg.Items, 2)
		require.Equal(t, 2, pg.Items[0].Version, "newest first")

		// Merge patch: null removes, objects merge.
		sess, snap, err := b.svc.SaveAgentSessionState(ctx, domain.SaveAgentSessionStateInput{
			SessionID: s.GlobalID(), ExpectedVersion: 2, State: js(`{"a":1,"nested":{"x":1,"y":2},"drop":true}`)})
		require.NoError(t, err)
		require.Equal(t, 3, snap.Version)
		sess, snap, err = b.svc.SaveAgentSessionState(ctx, domain.SaveAgentSessionStateInput{
			SessionID: s.GlobalID(), ExpectedVersion: 3, Patch: js(`{"drop":null,"nested":{"y":null,"z":3},"b":[1,2]}`)})
		require.NoError(t, err)
		require.Equal(t, 4, sess.StateVersion)
		require.JSONEq(t, `{"a":1,"nested":{"x":1,"z":3},"b":[1,2]}`, string(snap.State))

		// Exactly one of state and patch.
		_, _, err = b.svc.SaveAgentSessionState(ctx, domain.SaveAgentSessionStateInput{SessionID: s.GlobalID(), ExpectedVersion: 4})
		requireCode(t, err, domain.CodeBadUserInput, "state")
		_, _, err = b.svc.SaveAgentSessionState(ctx, domain.SaveAgentSessionStateInput{SessionID: s.GlobalID(),
			ExpectedVersion: 4, State: js(`{}`), Patch: js(`{}`)})
		requireCode(t, err, domain.CodeBadUserInput, "state")

		// Size limit, for a whole state and for a patch's result.
		big := `{"blob":"` + strings.Repeat("x", domain.MaxSessionStateBytes) + `"}`
		_, _, err = b.svc.SaveAgentSessionState(ctx, domain.SaveAgentSessionStateInput{SessionID: s.GlobalID(), ExpectedVersion: 4, State: js(big)})
		requireCode(t, err, domain.CodeLimitExceeded, "state")
		half := `{"h1":"` + strings.Repeat("x", domain.MaxSessionStateBytes/2+10) + `"}`
		_, _, err = b.svc.SaveAgentSessionState(ctx, domain.SaveAgentSessionStateInput{SessionID: s.GlobalID(), ExpectedVersion: 4, Patch: js(half)})
		require.NoError(t, err)
		half2 := `{"h2":"` + strings.Repeat("y", domain.MaxSessionStateBytes/2+10) + `"}`
		_, _, err = b.svc.SaveAgentSessionState(ctx, domain.SaveAgentSessionStateInput{SessionID: s.GlobalID(), ExpectedVersion: 5, Patch: js(half2)})
		requireCode(t, err, domain.CodeLimitExceeded, "patch")

		// Pruning keeps the newest snapshots.
		_, err = b.svc.PruneAgentSessionStates(ctx, domain.PruneAgentSessionStatesInput{SessionID: s.GlobalID(), KeepLast: 0})
		requireCode(t, err, domain.CodeBadUserInput, "keepLast")
		n2, err := b.svc.PruneAgentSessionStates(ctx, domain.PruneAgentSessionStatesInput{SessionID: s.GlobalID(), KeepLast: 2})
		require.NoError(t, err)
		require.Equal(t, 3, n2)
		pg, err = b.svc.States(ctx, s.ID, domain.PageArgs{})
		require.NoError(t, err)
		require.Len(t, pg.Items, 2)
		require.Equal(t, []int{5, 4}, []int{pg.Items[0].Version, pg.Items[1].Version})

		// Others cannot see the session.
		_, _, err = b.svc.SaveAgentSessionState(as(b.other), domain.SaveAgentSessionStateInput{SessionID: s.GlobalID(), ExpectedVersion: 5, State: js(`{}`)})
		requireCode(t, err, domain.CodeNotFound, "sessionId")
	})
}

func TestStepsAreGaplessAndNeverConflict(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		s := b.session("")
		ctx := as(b.agent)
		const n = 30
		var wg sync.WaitGroup
		ids := make([]int, n)
		errs := make([]error, 2*n)
		for i := range n {
			wg.Add(2)
			go func() {
				defer wg.Done()
				st, err := b.svc.RecordReActStep(ctx, domain.RecordReActStepInput{SessionID: s.GlobalID(),
					Thought: ptr(fmt.Sprintf("thought %d", i)), ActionType: ptr(domain.ActionToolCall)})
				errs[i] = err
				if err == nil {
					ids[i] = st.StepID
				}
			}()
			go func() {
				defer wg.Done()
				_, _, errs[n+i] = b.svc.SaveAgentSessionState(ctx, domain.SaveAgentSessionStateInput{
					SessionID: s.GlobalID(), ExpectedVersion: 1, Patch: js(fmt.Sprintf(`{"k%d":1}`, i))})
			}()
		}
		wg.Wait()
		for i := range n {
			require.NoError(t, errs[i])
			if errs[n+i] != nil {
				requireCode(t, errs[n+i], domain.CodeVersionConflict)
			}
		}
		seen := map[int]bool{}
		for _, id := range ids {
			seen[id] = true
		}
		for i := 1; i <= n; i++ {
			require.True(t, seen[i], "step %d missing", i)
		}
		pg, err := b.svc.Steps(ctx, s.ID, domain.PageArgs{First: ptr(100)})
		require.NoError(t, err)
		require.Len(t, pg.Items, n)
		for i, st := range pg.Items {
			require.Equal(t, i+1, st.StepID)
		}
	})
}

func TestTodoLists(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		s := b.session("")
		ctx := as(b.agent)
		items := func(deps ...[]int) []*domain.TodoItemInput {
			out := make([]*domain.TodoItemInput, len(deps))
			for i, d := range deps {
				out[i] = &domain.TodoItemInput{Description: fmt.Sprintf("item %d", i), Dependencies: d}
			}
			return out
		}
		_, err := b.svc.CreateTodoList(ctx, domain.CreateTodoListInput{SessionID: s.GlobalID(), Items: items(nil, []int{5})})
		requireCode(t, err, domain.CodeBadUserInput, "items[1].dependencies")
		_, err = b.svc.CreateTodoList(ctx, domain.CreateTodoListInput{SessionID: s.GlobalID(), Items: items([]int{2}, []int{0}, []int{1})})
		e := requireCode(t, err, domain.CodeCycleDetected)
		require.ElementsMatch(t, []int{0, 1, 2}, e.Details["cycle"])

		first, err := b.svc.CreateTodoList(ctx, domain.CreateTodoListInput{SessionID: s.GlobalID(), Items: items(nil)})
		require.NoError(t, err)
		list, err := b.svc.CreateTodoList(ctx, domain.CreateTodoListInput{SessionID: s.GlobalID(), Items: items(nil, []int{0}, nil)})
		require.NoError(t, err)
		lists, err := b.svc.TodoLists(ctx, s.ID)
		require.NoError(t, err)
		require.Len(t, lists, 2)
		require.Equal(t, first.ID, lists[0].ID)
		require.Equal(t, domain.TodoListAbandoned, lists[0].Status)
		active, err := b.svc.ActiveTodoList(ctx, s.ID)
		require.NoError(t, err)
		require.Equal(t, list.ID, active.ID)

		upd := func(pos int, to domain.TodoItemStatus, expected *int) (*domain.TodoList, error) {
			return b.svc.UpdateTodoItem(ctx, domain.UpdateTodoItemInput{TodoListID: list.GlobalID(), Position: pos, Status: &to, ExpectedVersion: expected})
		}
		_, err = upd(1, domain.TodoInProgress, nil)
		e = requireCode(t, err, domain.CodeInvalidTransition)
		require.Equal(t, []int{0}, e.Details["waitingOn"])
		_, err = upd(0, domain.TodoCompleted, nil)
		requireCode(t, err, domain.CodeInvalidTransition)
		l, err := upd(0, domain.TodoInProgress, ptr(1))
		require.NoError(t, err)
		require.Equal(t, 2, l.Version)
		_, err = upd(0, domain.TodoCompleted, ptr(1))
		requireCode(t, err, domain.CodeVersionConflict)
		_, err = upd(0, domain.TodoCompleted, ptr(2))
		require.NoError(t, err)
		_, err = upd(1, domain.TodoInProgress, nil)
		require.NoError(t, err)
		_, err = upd(1, domain.TodoFailed, nil)
		require.NoError(t, err)
		_, err = upd(1, domain.TodoPending, nil)
		require.NoError(t, err)
		_, err = upd(1, domain.TodoInProgress, nil)
		require.NoError(t, err)
		_, err = upd(1, domain.TodoCompleted, nil)
		require.NoError(t, err)
		l, err = upd(2, domain.TodoSkipped, nil)
		require.NoError(t, err)
		require.Equal(t, domain.TodoListCompleted, l.Status)

		_, err = b.svc.UpdateTodoItem(ctx, domain.UpdateTodoItemInput{TodoListID: first.GlobalID(), Position: 0, Status: ptr(domain.TodoSkipped)})
		requireCode(t, err, domain.CodeConflict)
	})
}

func TestSessionLifecycle(t *testing.T) {
	run(t, func(t *testing.T, b *bundle) {
		s := b.session("")
		ctx := as(b.owner)
		set := func(to domain.AgentSessionStatus) error {
			_, err := b.svc.SetAgentSessionStatus(ctx, domain.SetAgentSessionStatusInput{ID: s.GlobalID(), Status: to})
			return err
		}
		e := requireCode(t, set(domain.SessionCompleted), domain.CodeInvalidTransition)
		require.Equal(t, "PENDING", e.Details["from"])
		require.NoError(t, set(domain.SessionInProgress))
		require.NoError(t, set(domain.SessionCompleted))
		requireCode(t, set(domain.SessionFailed), domain.CodeInvalidTransition)
		got, err := b.svc.AgentSession(as(b.other), s.GlobalID())
		require.NoError(t, err)
		require.Nil(t, got)
		got, err = b.svc.AgentSession(as(b.admin), s.GlobalID())
		require.NoError(t, err)
		require.Equal(t, domain.SessionCompleted, got.Status)
	})
}
