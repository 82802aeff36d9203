package graph

import (
	"github.com/99designs/gqlgen/graphql"

	"github.com/taskgraph/taskgraph/internal/domain"
)

// file hands an uploaded file to the service, which knows nothing of gqlgen.
func file(u graphql.Upload) domain.File {
	return domain.File{Filename: u.Filename, Size: u.Size, Content: u.File}
}
