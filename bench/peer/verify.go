package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// aloneTries is how many requests of each kind the checks send one at a time.
const aloneTries = 5

// verified is what the checks before the timing found.
type verified struct {
	tasks, relationships, impacts, objects int
	// alone is the fewest statements one request cost with nothing else
	// running (of aloneTries), by scenario and target (-1: not counted).
	alone map[string]map[string]int64
}

// verify sends each request once to each server before anything is timed:
// every server's nested read must return the same rows as Taskgraph's (the
// same tasks in the same order, the same relationships, targets and file
// impacts), and each createTask must answer a task. It also records each
// read's answer length, which every answer under load must then have, and
// the statements of one request alone.
func verify(ctx context.Context, tg *target, order []*target, cfg config) (*verified, error) {
	v := &verified{alone: map[string]map[string]int64{"read": {}, "write": {}}}
	client := newClient(1)
	defer client.CloseIdleConnections()

	decode := func(t *target, body []byte) ([]readTask, error) {
		if t.key == "pg4" || t.key == "pg5" {
			return decodePostGraphileRead(body)
		}
		return decodeTaskgraphRead(body)
	}
	// once sends a request once to warm caches (and Taskgraph's token
	// mark), then aloneTries times one after the other, and returns the last
	// answer and the fewest statements one of those cost.
	once := func(t *target, sc string, body func() []byte) ([]byte, int64, error) {
		if _, err := t.request(ctx, client, body(), sc); err != nil {
			return nil, 0, err
		}
		var out []byte
		fewest := int64(-1)
		for range aloneTries {
			before := int64(0)
			if t.proxy != nil {
				before = t.proxy.Statements()
			}
			var err error
			if out, err = t.request(ctx, client, body(), sc); err != nil {
				return nil, 0, err
			}
			if t.proxy != nil {
				if n := t.proxy.Statements() - before; fewest < 0 || n < fewest {
					fewest = n
				}
			}
		}
		return out, fewest, nil
	}

	refBody, _, err := once(tg, "read", func() []byte { return tg.readBody })
	if err != nil {
		return nil, err
	}
	ref, err := decode(tg, refBody)
	if err != nil {
		return nil, fmt.Errorf("%s nested read: %w", tg.label, err)
	}
	want := min(cfg.page, cfg.size.tasks)
	if len(ref) != want {
		return nil, fmt.Errorf("%s nested read: %d tasks, want %d", tg.label, len(ref), want)
	}
	refPrint := fingerprint(ref)
	v.tasks = len(ref)
	for _, t := range ref {
		v.relationships += len(t.Rels)
		v.impacts += len(t.Impacts)
		for _, r := range t.Rels {
			v.impacts += len(r.TargetImpacts)
		}
	}
	v.objects = objects(ref)
	if v.relationships == 0 || v.impacts == 0 {
		return nil, fmt.Errorf("%s nested read: %d relationships and %d file impacts: the fill went wrong", tg.label, v.relationships, v.impacts)
	}

	scenario := func(sc string) bool { return slices.Contains(cfg.scenarios, sc) }
	for _, t := range order {
		body, n, err := once(t, "read", func() []byte { return t.readBody })
		if err != nil {
			return nil, err
		}
		got, err := decode(t, body)
		if err != nil {
			return nil, fmt.Errorf("%s nested read: %w", t.label, err)
		}
		if p := fingerprint(got); p != refPrint {
			return nil, mismatch(cfg.workDir, tg, t, refPrint, p, objects(ref), objects(got))
		}
		t.readLen = len(body)
		v.alone["read"][t.key] = n
		if scenario("write") {
			seq := &counter{n: 1_000_000_000} // numbers apart from those of the load
			body, n, err := once(t, "write", func() []byte { return t.writeBody(seq.next()) })
			if err != nil {
				return nil, err
			}
			if _, _, err := createdTask(body); err != nil {
				return nil, fmt.Errorf("%s createTask: %w", t.label, err)
			}
			v.alone["write"][t.key] = n
		}
	}
	logf("checked: every server's nested read returns the same %d tasks, %d relationships and targets, %d file impacts (%d objects)",
		v.tasks, v.relationships, v.impacts, v.objects)
	return v, nil
}

// mismatch writes both canonical answers to the work directory and says
// where they first differ.
func mismatch(dir string, ref, t *target, want, got string, wantN, gotN int) error {
	wantPath := filepath.Join(dir, "read-"+ref.key+".txt")
	gotPath := filepath.Join(dir, "read-"+t.key+".txt")
	_ = os.WriteFile(wantPath, []byte(want), 0o644)
	_ = os.WriteFile(gotPath, []byte(got), 0o644)
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	line := 0
	for line < len(wl) && line < len(gl) && wl[line] == gl[line] {
		line++
	}
	at := func(l []string) string {
		if line < len(l) {
			return l[line]
		}
		return "(end)"
	}
	return fmt.Errorf("%s's nested read differs from Taskgraph's (%d objects vs %d): first at line %d:\n  Taskgraph: %s\n  %s: %s\n(both written to %s and %s)",
		t.label, gotN, wantN, line+1, at(wl), t.key, at(gl), wantPath, gotPath)
}
