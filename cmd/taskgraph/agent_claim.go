package main

import (
	"context"
	"slices"
)

// claimInput is claimTask's input: the agent's run and where it runs. Its
// process id ("pid/n", n the agent of --parallel) tells the agent's own
// claims from every other's.
type claimInput struct {
	RunID            string `json:"runId"`
	Hostname         string `json:"hostname"`
	ProcessID        string `json:"processId"`
	WorkingDirectory string `json:"workingDirectory"`
}

// claimAnswer is claimTask's answer (agentClaim).
type claimAnswer struct {
	ClaimTask struct {
		Agent      *struct{ ID string }
		Execution  *struct{ AttemptNumber int }
		WaitReason *string
		Task       *agentTask
	}
}

// agentLostClaims reads the run's agents, to find a claim whose answer was
// lost.
const agentLostClaims = `query($id: ID!) { executionRun(id: $id) { agents {
  id status hostname processId execution { attemptNumber } task ` + agentTaskFields + ` } } }`

// claim claims a task as do would, with one difference: after a try that
// got no answer (or UNAVAILABLE), the claim may have been made and only its
// answer lost — the database went away after the commit, or the connection
// before the answer. Claiming again would leave that task to a lease that
// nobody heartbeats, and to be done again once it runs out. So before trying
// again the agent looks for a live agent of the run with its own host and
// process id and, if there is one, takes it up as its claim.
func (a *agentClient) claim(ctx context.Context, in claimInput, out *claimAnswer) error {
	unanswered := false
	return a.retry(ctx, func() error {
		if unanswered {
			found, err := a.lostClaim(ctx, in)
			if err != nil {
				return err
			}
			if found != nil {
				*out = *found
				return nil
			}
		}
		err := a.c.Do(ctx, agentClaim, map[string]any{"in": in}, out)
		unanswered = err != nil // a GraphQL error other than UNAVAILABLE is not retried
		return err
	})
}

// agentOfRun is an agent of the run, as agentLostClaims reads it.
type agentOfRun struct {
	ID, Status, Hostname, ProcessID string
	Execution                       *struct{ AttemptNumber int }
	Task                            *agentTask
}

// lostClaim is the run's live agent with in's host and process id, as a
// claim's answer, or nil.
func (a *agentClient) lostClaim(ctx context.Context, in claimInput) (*claimAnswer, error) {
	var d struct{ ExecutionRun struct{ Agents []agentOfRun } }
	if err := a.c.Do(ctx, agentLostClaims, map[string]any{"id": in.RunID}, &d); err != nil {
		return nil, err
	}
	agents := d.ExecutionRun.Agents
	i := slices.IndexFunc(agents, func(x agentOfRun) bool {
		return x.Status != "TERMINATED" && x.Hostname == in.Hostname && x.ProcessID == in.ProcessID && x.Task != nil && x.Execution != nil
	})
	if i < 0 {
		return nil, nil
	}
	var out claimAnswer
	out.ClaimTask.Agent = &struct{ ID string }{agents[i].ID}
	out.ClaimTask.Execution, out.ClaimTask.Task = agents[i].Execution, agents[i].Task
	return &out, nil
}
