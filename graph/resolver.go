// Package graph holds the GraphQL resolvers: each turns its arguments into one
// service call and returns the result. generated.go is gqlgen's executor.
package graph

import (
	"github.com/99designs/gqlgen/graphql"

	"github.com/taskgraph/taskgraph/internal/service"
)

//go:generate go tool gqlgen generate

// Resolver is the root of all resolvers.
type Resolver struct {
	Svc *service.Service
}

// Schema builds the executable schema over the service.
func Schema(svc *service.Service) graphql.ExecutableSchema {
	return NewExecutableSchema(Config{Resolvers: &Resolver{Svc: svc}})
}
