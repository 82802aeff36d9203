package graph

import (
	"github.com/taskgraph/taskgraph/graph/model"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// taskAgentPayload wraps the result of a task agent action.
func taskAgentPayload(a *domain.TaskAgentInstance, err error) (*model.TaskAgentActionPayload, error) {
	if err != nil {
		return nil, err
	}
	return &model.TaskAgentActionPayload{TaskAgent: a}, nil
}
