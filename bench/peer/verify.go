package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// aloneTries is how many requests of each kind the checks send one at a time.
const aloneTries = 5

// verified is what the checks before the timing found.
type verified struct {
	// reads are the read shapes' answers as Taskgraph gave them: tasks,
	// objects and values, by shape.
	reads map[string]readFacts
	// alone is the fewest statements one request cost with nothing else
	// running (of aloneTries), by scenario and target (-1: not counted).
	alone map[string]map[string]int64
}

// readFacts is the size of one read shape's verified answer.
type readFacts struct {
	tasks, objects, values int
}

// verify sends each request to each server before anything is timed:
// every server's answer to each read shape must hold the same rows as
// Taskgraph's (canonicalize: the same tasks in the same order, with the
// same fields and children), and each createTask must answer a task. It
// also records each read's answer length, which every answer under load
// must then have, and the statements of one request alone.
func verify(ctx context.Context, tg *target, order []*target, cfg config) (*verified, error) {
	v := &verified{reads: map[string]readFacts{}, alone: map[string]map[string]int64{}}
	client := newClient(1)
	defer client.CloseIdleConnections()

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

	for _, sc := range cfg.scenarios {
		sh, ok := shapeByKey(sc)
		if !ok {
			continue
		}
		v.alone[sc] = map[string]int64{}
		refBody, _, err := once(tg, sc, func() []byte { return tg.readBodies[sc] })
		if err != nil {
			return nil, err
		}
		ref, err := canonicalize(refBody, sh.ordered)
		if err != nil {
			return nil, fmt.Errorf("%s, %s read: %w", tg.label, sc, err)
		}
		if want := min(cfg.page, cfg.size.tasks); len(ref.lines) != want {
			return nil, fmt.Errorf("%s, %s read: %d tasks, want %d", tg.label, sc, len(ref.lines), want)
		}
		if sh.key != "wide" && ref.objects <= 2*len(ref.lines) {
			return nil, fmt.Errorf("%s, %s read: %d objects for %d tasks: the fill went wrong", tg.label, sc, ref.objects, len(ref.lines))
		}
		v.reads[sc] = readFacts{tasks: len(ref.lines), objects: ref.objects, values: ref.values}
		for _, t := range order {
			if !t.serves(sc) {
				continue
			}
			body, n, err := once(t, sc, func() []byte { return t.readBodies[sc] })
			if err != nil {
				return nil, err
			}
			got, err := canonicalize(body, sh.ordered)
			if err != nil {
				return nil, fmt.Errorf("%s, %s read: %w", t.label, sc, err)
			}
			if got.String() != ref.String() {
				return nil, mismatch(cfg.workDir, sc, tg, t, ref, got)
			}
			if t.readLens == nil {
				t.readLens = map[string]int{}
			}
			t.readLens[sc] = len(body)
			v.alone[sc][t.key] = n
		}
		logf("checked %s: every server answers the same %d tasks, %d objects, %d values", sc, len(ref.lines), ref.objects, ref.values)
	}
	if slices.Contains(cfg.scenarios, "write") {
		v.alone["write"] = map[string]int64{}
		for _, t := range order {
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
	return v, nil
}

// aloneOf is the statements of one request alone, -1 when not counted.
func (v *verified) aloneOf(scenario, target string) int64 {
	if n, ok := v.alone[scenario][target]; ok {
		return n
	}
	return -1
}

// mismatch writes both canonical answers to the work directory and says
// where they first differ.
func mismatch(dir, shape string, ref, t *target, want, got *canonicalRead) error {
	wantPath := filepath.Join(dir, "read-"+shape+"-"+ref.key+".txt")
	gotPath := filepath.Join(dir, "read-"+shape+"-"+t.key+".txt")
	_ = os.WriteFile(wantPath, []byte(want.String()), 0o644)
	_ = os.WriteFile(gotPath, []byte(got.String()), 0o644)
	line := firstDifference(want.lines, got.lines)
	at := func(l []string) string {
		if line < len(l) {
			return l[line]
		}
		return "(end)"
	}
	return fmt.Errorf("%s's %s read differs from Taskgraph's (%d objects vs %d): first at task %d:\n  Taskgraph: %.2000s\n  %s: %.2000s\n(both written to %s and %s)",
		t.label, shape, got.objects, want.objects, line+1, at(want.lines), t.key, at(got.lines), wantPath, gotPath)
}

// firstDifference is the index of the first line where a and b differ (the
// shorter one's length when one is the other's beginning).
func firstDifference(a, b []string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}
