// Package graph holds the GraphQL resolvers: each turns its arguments into one
// service call and returns the result. generated.go is gqlgen's executor.
package graph

import (
	"github.com/99designs/gqlgen/graphql"

	"github.com/taskgraph/taskgraph/internal/app"
	"github.com/taskgraph/taskgraph/internal/catalog"
	"github.com/taskgraph/taskgraph/internal/service"
	"github.com/taskgraph/taskgraph/internal/sessions"
)

//go:generate go tool gqlgen generate

// Resolver is the root of all resolvers: one field per domain's use-cases.
type Resolver struct {
	Svc       *service.Service // the core: projects, tasks, lists, plans, runs, events
	Catalog   *catalog.Service
	Sessions  *sessions.Service // agent sessions, todo lists, ReAct steps, lessons
	GlobalIDs *app.Nodes        // node() and nodes() over every domain's kinds
}

// Schema builds the executable schema over the domains' use-cases.
func Schema(svc *service.Service, cat *catalog.Service, sess *sessions.Service) graphql.ExecutableSchema {
	return NewExecutableSchema(Config{Resolvers: &Resolver{Svc: svc, Catalog: cat, Sessions: sess,
		GlobalIDs: app.NewNodes(svc.NodeOf, cat.NodeOf, sess.NodeOf)}})
}
