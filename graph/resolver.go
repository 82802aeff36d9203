// Package graph holds the GraphQL resolvers: each turns its arguments into one
// service call and returns the result. generated.go is gqlgen's executor.
package graph

import (
	"github.com/99designs/gqlgen/graphql"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/catalog"
	"github.com/taskgraph/taskgraph/internal/queue"
	"github.com/taskgraph/taskgraph/internal/routing"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/validation"
)

//go:generate go tool gqlgen generate

// Resolver is the root of all resolvers: one field per domain's use-cases.
type Resolver struct {
	Svc       *service.Service // the core: projects, tasks, lists, plans, runs, events
	Catalog   *catalog.Service
	Rules     *validation.Service // validation rules
	Routing   *routing.Service    // routers, planners, workers and their messages
	Queue     *queue.Service      // the function queue
	GlobalIDs *app.Nodes          // node() and nodes() over every domain's kinds
}

// Schema builds the executable schema over the domains' use-cases.
func Schema(svc *service.Service, cat *catalog.Service, rules *validation.Service, rt *routing.Service, qu *queue.Service) graphql.ExecutableSchema {
	return NewExecutableSchema(Config{Resolvers: &Resolver{Svc: svc, Catalog: cat, Rules: rules, Routing: rt, Queue: qu,
		GlobalIDs: app.NewNodes(svc.NodeOf, cat.NodeOf, rules.NodeOf, rt.NodeOf, qu.NodeOf)}})
}
