package gqlexec

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// A schema of the shapes the tests need: an interface two objects
// implement, and two enums.
const testSDL = `
interface Node { id: ID! }
enum TaskStatus { PENDING IN_PROGRESS COMPLETED }
enum RelationshipType { DEPENDS_ON BLOCKS }
type Task implements Node { id: ID! title: String! status: TaskStatus! }
type Project implements Node { id: ID! name: String! }
type Query { node(id: ID!): Node }
`

// The implementors lists as gqlgen generates them: a variable per object
// type, the type then its interfaces.
var (
	taskImplementors    = []string{"Task", "Node"}
	projectImplementors = []string{"Project", "Node"}
)

func testSchema(t testing.TB) *ast.Schema {
	t.Helper()
	schema, err := gqlparser.LoadSchema(&ast.Source{Name: "test.graphqls", Input: testSDL})
	require.Nil(t, err)
	return schema
}
