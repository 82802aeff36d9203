package archtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/taskgraph/taskgraph/"

// kernel are the packages every use-case package may import.
var kernel = []string{"internal/domain", "internal/store", "internal/events", "internal/auth", "internal/loader",
	"internal/app", "internal/planning", "internal/files", "internal/grouping/cluster"}

// useCases are the packages that hold a domain's use-cases: the core
// (internal/service) and one package per self-contained domain. A new domain
// is added here and to docs/architecture.md.
var useCases = []string{"internal/service", "internal/catalog", "internal/validation", "internal/reasoning", "internal/grouping",
	"internal/questions", "internal/routing", "internal/queue", "internal/sessions"}

// allowed says which of the module's packages each package may import
// (production code; tests may import more).
func allowed(pkg string) ([]string, bool) {
	switch {
	case pkg == "cmd/taskgraph":
		return nil, true // the main package wires everything
	case slices.Contains(useCases, pkg):
		deps := slices.Clone(kernel)
		if pkg != "internal/service" {
			deps = append(deps, "internal/service") // a domain may use the core's use-cases, never the reverse
		}
		return deps, true
	}
	rooms := map[string][]string{
		"db":                         {},
		"internal/domain":            {},
		"internal/loader":            {"internal/tracing"},
		"internal/tracing":           {},
		"internal/files":             {},
		"internal/client":            {},
		"internal/testdb":            {"internal/store", "internal/domain", "db"},
		"internal/archtest":          {},
		"internal/readme":            {},
		"internal/tools/execpass":    {},
		"internal/gqlexec":           {},
		"internal/tools/fieldmodes":  {},
		"internal/tools/testsummary": {},
		"bench/peer":                 {},
		"internal/planning":          {"internal/domain"},
		"internal/grouping/cluster":  {},
		"internal/auth":              {"internal/domain"},
		"internal/sso":               {"internal/domain"},
		"internal/store":             {"internal/domain", "db", "internal/tracing"},
		"internal/events":            {"internal/domain", "internal/store"},
		"internal/app":               {"internal/domain", "internal/store", "internal/events", "internal/auth", "internal/loader"},
		"internal/server":            {"internal/domain", "internal/auth", "internal/ui", "internal/tracing"},
		"internal/ui":                {},
		"internal/export":            {"internal/domain", "internal/catalog"},
		"internal/telegram":          {"internal/domain", "internal/store", "internal/auth", "internal/questions"},
		"internal/mcp":               {"internal/domain", "internal/client"},
		"graph/model":                {"internal/domain"},
		"graph":                      append([]string{"graph/model", "internal/domain", "internal/app", "internal/planning", "internal/gqlexec"}, useCases...),
	}
	deps, ok := rooms[pkg]
	return deps, ok
}

// TestImportDirection fails when a package imports one of the module's
// packages it may not, or when a package is in no room of the table.
func TestImportDirection(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		deps, ok := allowed(pkg)
		if !ok {
			t.Errorf("%s is in no room: add it to the table of this test and to docs/architecture.md", pkg)
			continue
		}
		if pkg == "cmd/taskgraph" {
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			if !slices.Contains(deps, dep) {
				t.Errorf("%s imports %s, against the direction in docs/architecture.md", pkg, dep)
			}
		}
	}
}

// TestDomainImportsStandardLibraryOnly: the shared kernel of entities and
// rules depends on nothing but the standard library.
func TestDomainImportsStandardLibraryOnly(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{range .Imports}}{{.}} {{end}}", "./internal/domain", "./internal/planning")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") && !strings.HasPrefix(imp, module+"internal/domain") {
			t.Errorf("internal/domain or internal/planning imports %s: they hold pure rules over the standard library", imp)
		}
	}
}

// TestGraphHasNoInternalTests: graph's tests are package graph_test. A test
// file of package graph would make go test compile the generated executor
// (110,000 lines) a second time, as the package's test variant: over a
// minute of make test under -race on 2 cores.
func TestGraphHasNoInternalTests(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{join .TestGoFiles \" \"}}", "./graph")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if files := strings.TrimSpace(string(out)); files != "" {
		t.Fatalf("graph has tests of package graph (%s): make them package graph_test, or move what they test out of graph (internal/gqlexec)", files)
	}
}
