package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/client"
	"github.com/taskgraph/taskgraph/internal/server"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// sessionEvents without a cursor is multiplexed as projectEvents is: the
// subscribers of one session, selection and visibility share one execution,
// each held to what it would get alone.

// sessionCollector collects a sessionEvents subscription.
type sessionCollector struct {
	*streamCollector[sessionEvent]
}

func collectSession(sub *client.Subscription) *sessionCollector {
	return &sessionCollector{collectStream(sub, tryNextSessionEvent)}
}

func tryNextSessionEvent(sub *client.Subscription) (sessionEvent, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	r, err := sub.Next(ctx)
	if err != nil {
		return sessionEvent{}, err
	}
	if len(r.Errors) > 0 {
		return sessionEvent{}, r.Errors
	}
	var d struct{ SessionEvents sessionEvent }
	err = json.Unmarshal(r.Data, &d)
	return d.SessionEvents, err
}

// waitForStep waits until the collector holds the session's step step.
func (c *sessionCollector) waitForStep(t testing.TB, step int) []sessionEvent {
	t.Helper()
	var evs []sessionEvent
	eventually(t, fmt.Sprintf("step %d", step), func() bool {
		var err error
		evs, err = c.events()
		require.NoError(t, err)
		return len(evs) > 0 && evs[len(evs)-1].StepID >= step
	})
	return evs
}

// sessionSteps records steps of one session and counts them.
type sessionSteps struct {
	s       *testServer
	token   string
	session string
	n       atomic.Int64 // steps recorded (stepIds are 1..n)
}

func (st *sessionSteps) step(t testing.TB, thought string) {
	t.Helper()
	st.s.query(t, st.token, recordStepMutation, M{"in": M{"sessionId": st.session, "thought": thought}})
	st.n.Add(1)
}

// warmSession records steps until every collector has an event: each
// subscription is then live.
func warmSession(t testing.TB, st *sessionSteps, cs ...*sessionCollector) {
	t.Helper()
	live := make([]func() (int, error), len(cs))
	for i, c := range cs {
		live[i] = c.count
	}
	warmUntilLive(t, live, func(int) { st.step(t, "warm") })
}

// requireSteps: evs are the session's steps one after another, none
// recorded before the subscription (steps up to before), the last one last.
func requireSteps(t testing.TB, evs []sessionEvent, session string, before, last int) {
	t.Helper()
	require.NotEmpty(t, evs)
	require.Greater(t, evs[0].StepID, before, "a step recorded before the subscription")
	for i, e := range evs {
		require.Equal(t, "REACT_STEP_RECORDED", e.Type)
		require.Equal(t, session, e.Session.ID, "another session's event")
		if i > 0 {
			require.Equal(t, evs[i-1].StepID+1, e.StepID, "a gap or a repeat after step %d", evs[i-1].StepID)
		}
	}
	require.Equal(t, last, evs[len(evs)-1].StepID, "nothing after the last step")
}

// TestSharedSessionEvents: ten subscribers of one session over two
// connections share one execution; each receives the session's steps
// recorded after it subscribed, in order, none twice, none of another
// session. The admin runs an execution of its own; a member of another
// project and an agent of another project are refused as they would be
// alone.
func TestSharedSessionEvents(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newSessionFixture(t, s, nil)
		other := s.query(t, f.agent, createSessionMutation, M{"in": M{"projectId": f.project, "mission": "other"}}).
			S("createAgentSession.session.id")
		elsewhere := s.createProject(t, s.AdminToken, "session-elsewhere")
		_, foreignAgent := s.userWithToken(t, "session-foreign-agent", "AGENT", elsewhere)
		_, outsider := s.member(t, "session-outsider")
		st := &sessionSteps{s: s, token: f.agent, session: f.session}
		otherSteps := &sessionSteps{s: s, token: f.agent, session: other}
		st.step(t, "before")

		var cs []*sessionCollector
		for range 2 {
			conn := s.dial(t, f.agent)
			for range 5 {
				cs = append(cs, collectSession(subscribeSession(t, conn, f.session, "")))
			}
		}
		admin := collectSession(subscribeSession(t, s.dial(t, s.AdminToken), f.session, ""))
		for _, token := range []string{outsider, foreignAgent} {
			_, err := tryNextSessionEvent(subscribeSession(t, s.dial(t, token), f.session, ""))
			var es client.Errors
			require.ErrorAs(t, err, &es)
			require.Equal(t, "NOT_FOUND", es.Code(), "%v", es)
		}
		warmSession(t, st, append(cs, admin)...)
		require.Equal(t, 2.0, s.metric(t, "taskgraph_shared_subscription_executions"), "the agent's ten, the admin's one")
		for i := range 10 {
			otherSteps.step(t, "elsewhere")
			st.step(t, fmt.Sprintf("s%d", i))
		}
		last := int(st.n.Load())
		for _, c := range append(cs, admin) {
			requireSteps(t, c.waitForStep(t, last), f.session, 1, last)
		}
	})
}

// TestSharedSessionEventsJoiners: subscribers joining a running execution
// while steps are recorded one after another each see no step recorded
// before they subscribed and miss none after.
func TestSharedSessionEventsJoiners(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newSessionFixture(t, s, nil)
		st := &sessionSteps{s: s, token: f.agent, session: f.session}
		first := collectSession(subscribeSession(t, s.dial(t, f.agent), f.session, ""))
		warmSession(t, st, first)
		var stop atomic.Bool
		writer := make(chan struct{})
		go func() {
			defer close(writer)
			for !stop.Load() {
				r, err := s.post(f.agent, recordStepMutation, M{"in": M{"sessionId": f.session, "thought": "w"}})
				if err != nil || len(r.Errors) > 0 {
					t.Errorf("step: %v %v", err, r.Errors)
					return
				}
				st.n.Add(1)
			}
		}()
		type joiner struct {
			before int
			c      *sessionCollector
		}
		var js []joiner
		conn := s.dial(t, f.agent)
		for range 12 {
			before := int(st.n.Load())
			js = append(js, joiner{before: before, c: collectSession(subscribeSession(t, conn, f.session, ""))})
			time.Sleep(15 * time.Millisecond)
		}
		eventually(t, "every joiner has steps", func() bool {
			for _, j := range js {
				if evs, _ := j.c.events(); len(evs) < 3 {
					return false
				}
			}
			return true
		})
		stop.Store(true)
		<-writer
		last := int(st.n.Load())
		for _, j := range js {
			requireSteps(t, j.c.waitForStep(t, last), f.session, j.before, last)
		}
		first.waitForStep(t, last)
		require.Equal(t, 1.0, s.metric(t, "taskgraph_shared_subscription_executions"))
	})
}

// sessionBigSelection: a session's step events, large.
const sessionBigSelection = `subscription($s: ID!) { sessionEvents(sessionId: $s) { cursor type ... on ReActStepRecorded { stepId thought } } }`

// TestSharedSessionEventsSlowCapsRevocation: a member of a shared
// sessionEvents execution that does not read is ended alone with
// LIMIT_EXCEEDED and the cursor to resume from, which misses nothing; every
// member counts against the per-token cap; revoking the token of some closes
// their sockets while the others go on.
func TestSharedSessionEventsSlowCapsRevocation(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s, _ := startServerWith(t, url, serverOptions{websocket: server.WebsocketConfig{
			WriteTimeout: time.Hour, PingInterval: time.Hour, SharedQueue: 8, MaxSubscriptionsPerUser: 2}})
		f := newSessionFixture(t, s, nil)
		agentUser, kept := s.userWithToken(t, "session-slow-agent", "AGENT", f.project)
		revokedID, revoked := s.tokenFor(t, agentUser, "AGENT", f.project)
		subscribe := func(r *rawWS, id string) {
			r.send(M{"type": "subscribe", "id": id, "payload": M{"query": sessionBigSelection, "variables": M{"s": f.session}}})
		}

		// The revoked token's two subscribers, one of which never reads:
		// it falls behind.
		slow := s.dialSlowRaw(t)
		slow.init(M{"Authorization": "Bearer " + revoked})
		subscribe(slow, "slow")
		other := s.mustDialRaw(t)
		other.init(M{"Authorization": "Bearer " + revoked})
		subscribe(other, "other")
		requireAccepted(t, other)
		fast := collectSession(subscribeSession(t, s.dial(t, kept), f.session, ""))
		st := &sessionSteps{s: s, token: f.agent, session: f.session}
		warmSession(t, st, fast)
		// The token's cap (2) counts members: a third subscription is
		// refused although it would join a running execution.
		over := s.mustDialRaw(t)
		over.init(M{"Authorization": "Bearer " + revoked})
		subscribe(over, "over")
		m, err := over.read()
		require.NoError(t, err)
		require.Equal(t, "error", m["type"], "got %v", m)
		require.Contains(t, fmt.Sprint(m["payload"]), "too many subscriptions: at most 2")

		big := strings.Repeat("x", 90_000)
		for range 60 {
			st.step(t, big)
			for got := 0; got < int(st.n.Load()); {
				mo, err := other.read()
				require.NoError(t, err)
				if mo["type"] == "next" {
					got = int(mo["payload"].(map[string]any)["data"].(map[string]any)["sessionEvents"].(map[string]any)["stepId"].(float64))
				}
			}
		}
		last := int(st.n.Load())
		fast.waitForStep(t, last)
		require.Equal(t, 2.0, s.metric(t, "taskgraph_shared_subscription_executions"),
			"one for the revoked token's subscribers, one for the other token's")
		slowStep, cursor := readSlowSteps(t, slow)
		require.Less(t, slowStep, last, "the slow subscriber was cut off")
		// Resuming from its cursor: the rest of the session's steps.
		rest := subscribeSession(t, s.dial(t, s.AdminToken), f.session, cursor)
		for want := slowStep + 1; want <= last; want++ {
			require.Equal(t, want, nextStreamEvent(t, rest, "sessionEvents").StepID)
		}

		s.query(t, s.AdminToken, `mutation($id: ID!) { revokeApiToken(input: {id: $id}) { apiToken { id } } }`, M{"id": revokedID})
		code, reason := other.closeCode()
		require.Equal(t, server.CloseForbidden, code)
		require.Contains(t, reason, "revoked")
		st.step(t, "still")
		fast.waitForStep(t, last+1)
		eventually(t, "the revoked token's execution stops", func() bool {
			return s.metric(t, "taskgraph_shared_subscription_executions") == 1
		})
	})
}

// readSlowSteps reads a slow sessionEvents subscriber's backlog up to the
// error that ends it: LIMIT_EXCEEDED with the cursor of the last step it was
// delivered. It returns that step and cursor.
func readSlowSteps(t *testing.T, slow *rawWS) (step int, cursor string) {
	t.Helper()
	for {
		m, err := slow.read()
		require.NoError(t, err)
		if m["type"] == "next" {
			e := m["payload"].(map[string]any)["data"].(map[string]any)["sessionEvents"].(map[string]any)
			next := int(e["stepId"].(float64))
			require.True(t, step == 0 || next == step+1, "step %d after %d", next, step)
			step, cursor = next, e["cursor"].(string)
			continue
		}
		require.Equal(t, "error", m["type"], "%v", m)
		ext := m["payload"].([]any)[0].(map[string]any)["extensions"].(map[string]any)
		require.Equal(t, "LIMIT_EXCEEDED", ext["code"])
		require.Equal(t, "SUBSCRIBER_TOO_SLOW", ext["reason"])
		require.Equal(t, cursor, ext["cursor"], "the error names the last cursor delivered")
		require.Positive(t, step)
		return step, cursor
	}
}
