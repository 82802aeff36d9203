package main

import "testing"

func TestPlanRelationships(t *testing.T) {
	const n, r = 1000, 2000
	plan, err := planRelationships(n, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != r {
		t.Fatalf("%d relationships, want %d", len(plan), r)
	}
	perSource := map[int]int{}
	seen := map[plannedRel]bool{}
	for _, rel := range plan {
		if seen[rel] {
			t.Errorf("%+v twice", rel)
		}
		seen[rel] = true
		perSource[rel.source]++
		if rel.source == rel.target || rel.target < 0 || rel.target >= n {
			t.Errorf("%+v: bad target", rel)
		}
		// Every wait points to an earlier task, so the graph is acyclic.
		waiter, waitsOn := rel.source, rel.target
		switch rel.typ {
		case "BLOCKS":
			waiter, waitsOn = rel.target, rel.source
		case "RELATED_TO":
			continue
		case "DEPENDS_ON":
		default:
			t.Errorf("%+v: unexpected type", rel)
		}
		if waitsOn >= waiter {
			t.Errorf("%+v: task %d waits on the later task %d", rel, waiter, waitsOn)
		}
	}
	for i := range n {
		if perSource[i] != r/n {
			t.Errorf("task %d is the source of %d relationships, want %d", i, perSource[i], r/n)
		}
	}
	again, _ := planRelationships(n, r)
	for i := range plan {
		if plan[i] != again[i] {
			t.Fatal("two plans differ: the data would change between runs")
		}
	}
}

func TestPlanRelationshipsRefusesTooMany(t *testing.T) {
	if _, err := planRelationships(1, 1); err == nil {
		t.Error("planned a relationship for one task")
	}
	if _, err := planRelationships(10, 10*relWindow+1); err == nil {
		t.Error("planned more relationships than the window holds")
	}
}
