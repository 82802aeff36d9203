package app

import (
	"context"

	"github.com/taskgraph/taskgraph/internal/auth"
	"github.com/taskgraph/taskgraph/internal/domain"
)

// NodeSource loads an entity of one of the kinds its domain owns, nil when
// the caller may not see it; ok is false when kind is not one of them.
type NodeSource func(ctx context.Context, p *auth.Principal, kind domain.Kind, id string) (node domain.Node, ok bool, err error)

// Nodes resolves global ids through the sources of every domain.
type Nodes struct{ sources []NodeSource }

// NewNodes returns Nodes asking sources in order.
func NewNodes(sources ...NodeSource) *Nodes { return &Nodes{sources: sources} }

// Node resolves any global id the caller may see; nil otherwise.
func (n *Nodes) Node(ctx context.Context, gid string) (domain.Node, error) {
	p, err := Caller(ctx)
	if err != nil {
		return nil, err
	}
	kind, id, ok := domain.ParseGlobalID(gid)
	if !ok {
		return nil, domain.InputError("id", "%q is not a valid id", gid)
	}
	return n.node(ctx, p, kind, id)
}

// Nodes resolves several global ids, in order; nil for each one not visible.
func (n *Nodes) Nodes(ctx context.Context, gids []string) ([]domain.Node, error) {
	p, err := Caller(ctx)
	if err != nil {
		return nil, err
	}
	if len(gids) > domain.MaxPageSize {
		return nil, &domain.Error{Code: domain.CodeLimitExceeded, Field: "ids", Message: "at most 100 ids at once"}
	}
	out := make([]domain.Node, len(gids))
	for i, gid := range gids {
		kind, id, ok := domain.ParseGlobalID(gid)
		if !ok {
			return nil, domain.InputError("ids", "%q is not a valid id", gid)
		}
		if out[i], err = n.node(ctx, p, kind, id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (n *Nodes) node(ctx context.Context, p *auth.Principal, kind domain.Kind, id string) (domain.Node, error) {
	for _, src := range n.sources {
		if node, ok, err := src(ctx, p, kind, id); ok || err != nil {
			return node, err
		}
	}
	return nil, nil
}
