package graph

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// The ExecutionEvent interface's project, task, run and agent fields, shared
// by every event type: gqlgen wants one resolver per type and field, and each
// of them calls these so that the references resolve the same way (through
// the request's loaders) whatever the kind.

func (r *Resolver) eventProject(ctx context.Context, ev domain.ExecutionEvent) (*domain.Project, error) {
	return r.Svc.Projects.ProjectByID(ctx, ev.Record().ProjectID)
}

func (r *Resolver) eventTask(ctx context.Context, ev domain.ExecutionEvent) (*domain.Task, error) {
	return r.Svc.Tasks.TaskByID(ctx, ev.Record().TaskID)
}

func (r *Resolver) eventRun(ctx context.Context, ev domain.ExecutionEvent) (*domain.ExecutionRun, error) {
	return r.Svc.Runs.RunByID(ctx, ev.Record().RunID)
}

func (r *Resolver) eventAgent(ctx context.Context, ev domain.ExecutionEvent) (*domain.BuildAgent, error) {
	return r.Svc.Runs.AgentByID(ctx, ev.Record().AgentID)
}
