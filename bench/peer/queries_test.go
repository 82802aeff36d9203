package main

import (
	"strings"
	"testing"
)

// Two servers' answers with the same rows in different orders (PostGraphile
// orders relationships and impacts by primary key), in different wrappers
// and with different ids, read as the same rows when children are
// unordered, and as different ones when they are ordered.
func TestCanonicalReadComparesAcrossServers(t *testing.T) {
	taskgraph := `{"data":{"taskList":{"tasks":{"nodes":[
	  {"id":"VGFzazox","displayId":"TU-P-TASK-001","title":"a","status":"PENDING",
	   "relationships":[
	     {"id":"r1","type":"DEPENDS_ON","target":{"id":"t0","displayId":"TU-P-TASK-000","title":"z","status":"PENDING","fileImpacts":[{"id":"f1","filePath":"a.go","operation":"UPDATE"},{"id":"f2","filePath":"b.go","operation":"READ"}]}},
	     {"id":"r2","type":"BLOCKS","target":{"id":"t2","displayId":"TU-P-TASK-002","title":"y","status":"PENDING","fileImpacts":[]}}],
	   "fileImpacts":[{"id":"f3","filePath":"c.go","operation":"CREATE"}]}]}}}}`
	postgraphile := `{"data":{"taskList":{"tasks":{"nodes":[{"task":
	  {"id":"5f0e","displayId":"TU-P-TASK-001","title":"a","status":"PENDING",
	   "relationships":{"nodes":[
	     {"id":"r2","type":"BLOCKS","target":{"id":"t2","displayId":"TU-P-TASK-002","title":"y","status":"PENDING","fileImpacts":{"nodes":[]}}},
	     {"id":"r1","type":"DEPENDS_ON","target":{"id":"t0","displayId":"TU-P-TASK-000","title":"z","status":"PENDING","fileImpacts":{"nodes":[{"id":"f2","filePath":"b.go","operation":"READ"},{"id":"f1","filePath":"a.go","operation":"UPDATE"}]}}}]},
	   "fileImpacts":{"nodes":[{"id":"f3","filePath":"c.go","operation":"CREATE"}]}}}]}}}}`
	a, err := canonicalize([]byte(taskgraph), false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := canonicalize([]byte(postgraphile), false)
	if err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("same rows, different canonical forms:\n%s\n%s", a, b)
	}
	// 1 task, 2 relationships, 2 targets, 2 impacts of targets, 1 of the task.
	if a.objects != 8 || b.objects != 8 {
		t.Errorf("objects = %d and %d, want 8", a.objects, b.objects)
	}
	// Scalars without ids: 3 on the task, 1 + 3 on each relationship and
	// target, 2 on each impact.
	if want := 3 + 2*4 + 3*2; a.values != want || b.values != want {
		t.Errorf("values = %d and %d, want %d", a.values, b.values, want)
	}

	ao, _ := canonicalize([]byte(taskgraph), true)
	bo, _ := canonicalize([]byte(postgraphile), true)
	if ao.String() == bo.String() {
		t.Error("children in different orders compared equal although the shape orders them")
	}

	missing := strings.Replace(postgraphile, `{"id":"f2","filePath":"b.go","operation":"READ"},`, "", 1)
	c, err := canonicalize([]byte(missing), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.String() == a.String() {
		t.Error("a missing file impact went unnoticed")
	}
}

// Times compare by instant and numbers by value, whatever their text.
func TestCanonicalScalars(t *testing.T) {
	a := `{"data":{"taskList":{"tasks":{"nodes":[{"displayId":"D","createdAt":"2026-11-28T12:00:00.123456Z","n":3,"x":null,"log":{"b":1,"a":[1,2]}}]}}}}`
	b := `{"data":{"taskList":{"tasks":{"nodes":[{"task":{"log":{"a":[1,2],"b":1.0},"x":null,"n":3.0,"createdAt":"2026-11-28T13:00:00.123456+01:00","displayId":"D"}}]}}}}`
	ca, err := canonicalize([]byte(a), true)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := canonicalize([]byte(b), true)
	if err != nil {
		t.Fatal(err)
	}
	if ca.String() != cb.String() {
		t.Errorf("the same values read differently:\n%s%s", ca, cb)
	}
	later := strings.Replace(a, "00.123456Z", "00.123457Z", 1)
	if cl, _ := canonicalize([]byte(later), true); cl.String() == ca.String() {
		t.Error("a microsecond's difference went unnoticed")
	}
	if canonicalScalar("2026-11-28 is a date") != `"2026-11-28 is a date"` {
		t.Error("a string that is not a time was rewritten")
	}
}

func TestDecodeDataRefusesErrors(t *testing.T) {
	var v map[string]any
	for _, body := range []string{`{"errors":[{"message":"no"}],"data":null}`, `{"data":null}`, `<html>`} {
		if err := decodeData([]byte(body), &v); err == nil {
			t.Errorf("%s decoded without an error", body)
		}
	}
	if _, err := canonicalize([]byte(`{"data":{"taskList":null}}`), false); err == nil {
		t.Error("a null taskList was read")
	}
	if _, _, err := createdTask([]byte(`{"data":{"createTask":{"task":{"id":"x","displayId":"D-1"}}}}`)); err != nil {
		t.Error(err)
	}
	if _, _, err := createdTask([]byte(`{"data":{"createTask":null}}`)); err == nil || !strings.Contains(err.Error(), "no task") {
		t.Errorf("a null createTask: %v", err)
	}
}

// Each shape's PostGraphile query uses each version's names, and every
// shape has its own operation name (the floor answers by it).
func TestShapesQueries(t *testing.T) {
	ops := map[string]bool{}
	for _, s := range readShapes {
		pg4, pg5 := s.pg4Query(), s.pg5Query()
		if !strings.Contains(pg4, "taskListById(id: $id)") || strings.Contains(pg4, "rowId") || strings.Contains(pg4, "ROW_ID") {
			t.Errorf("%s: PostGraphile 4's query:\n%s", s.key, pg4)
		}
		if !strings.Contains(pg5, "taskListByRowId(rowId: $id)") || strings.Contains(pg5, "ROW_ID") || strings.Contains(pg5, "LIST_BY_ID") {
			t.Errorf("%s: PostGraphile 5's query:\n%s", s.key, pg5)
		}
		for _, q := range []string{s.taskgraph, pg4, pg5} {
			if !strings.Contains(q, "query "+s.op+"(") {
				t.Errorf("%s: a query is not named %s:\n%s", s.key, s.op, q)
			}
		}
		if ops[s.op] || !strings.HasPrefix(s.op, "Read") {
			t.Errorf("%s: operation name %q repeats or does not start with Read", s.key, s.op)
		}
		ops[s.op] = true
		if got, ok := shapeByKey(s.key); !ok || got.op != s.op {
			t.Errorf("shapeByKey(%q) = %v, %v", s.key, got.op, ok)
		}
	}
	if _, ok := shapeByKey("write"); ok {
		t.Error("write is not a read shape")
	}
	light, _ := shapeByKey("light")
	if strings.Contains(light.taskgraph, " id type") || !strings.Contains(light.postgraphile, "(orderBy: PRIMARY_KEY_ASC)") {
		t.Errorf("the light shape asks ids below the tasks, or PostGraphile for no order:\n%s", light.postgraphile)
	}
}

func TestParseScenarios(t *testing.T) {
	for in, want := range map[string]string{
		"read":             "full,light,deep,wide",
		"write, deep,full": "full,deep,write",
		"wide,read":        "full,light,deep,wide",
	} {
		got, err := parseScenarios(in)
		if err != nil || strings.Join(got, ",") != want {
			t.Errorf("%q: %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "reads", "full,nope"} {
		if _, err := parseScenarios(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
