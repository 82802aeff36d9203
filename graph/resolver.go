// Package graph holds the GraphQL resolvers: each turns its arguments into one
// service call and returns the result. generated.go is gqlgen's executor.
package graph

import (
	"github.com/99designs/gqlgen/graphql"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/catalog"
	"github.com/taskgraph/taskgraph/internal/grouping"
	"github.com/taskgraph/taskgraph/internal/questions"
	"github.com/taskgraph/taskgraph/internal/queue"
	"github.com/taskgraph/taskgraph/internal/reasoning"
	"github.com/taskgraph/taskgraph/internal/routing"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/sessions"
	"github.com/taskgraph/taskgraph/internal/validation"
)

//go:generate go tool gqlgen generate

// Resolver is the root of all resolvers: one field per domain's use-cases.
type Resolver struct {
	Svc         *service.Service // the core: projects, tasks, lists, plans, runs, events
	Catalog     *catalog.Service
	Rules       *validation.Service // validation rules
	Reasoning   *reasoning.Service  // reasoning records: multi-pass executions
	Grouping    *grouping.Service   // grouping suggestions and task agents
	QuestionSvc *questions.Service  // questions put to people (field name: resolvers have Questions methods)
	Routing     *routing.Service    // routers, planners, workers and their messages
	Queue       *queue.Service      // the function queue
	Sessions    *sessions.Service   // agent sessions, todo lists, ReAct steps, lessons
	GlobalIDs   *app.Nodes          // node() and nodes() over every domain's kinds
}

// Schema builds the executable schema over r's domains, and node() over
// each domain's kinds.
func Schema(r *Resolver) graphql.ExecutableSchema {
	r.GlobalIDs = app.NewNodes(r.Svc.NodeOf, r.Catalog.NodeOf, r.Rules.NodeOf, r.Reasoning.NodeOf, r.Grouping.NodeOf,
		r.QuestionSvc.NodeOf, r.Routing.NodeOf, r.Queue.NodeOf, r.Sessions.NodeOf)
	return NewExecutableSchema(Config{Resolvers: r})
}
