package graph

import "github.com/taskgraph/taskgraph/internal/domain"

// strs is a stored list as a GraphQL list (never null).
func strs(v domain.Strings) []string {
	if v == nil {
		return []string{}
	}
	return []string(v)
}
