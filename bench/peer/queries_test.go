package main

import (
	"strings"
	"testing"
)

// Two servers' answers with the same rows in different orders (PostGraphile
// orders relationships and impacts by primary key) read as the same rows.
func TestDecodedReadsCompareAcrossShapes(t *testing.T) {
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
	a, err := decodeTaskgraphRead([]byte(taskgraph))
	if err != nil {
		t.Fatal(err)
	}
	b, err := decodePostGraphileRead([]byte(postgraphile))
	if err != nil {
		t.Fatal(err)
	}
	if fa, fb := fingerprint(a), fingerprint(b); fa != fb {
		t.Errorf("same rows, different fingerprints:\n%s\n%s", fa, fb)
	}
	// 1 task, 2 relationships, 2 targets, 2 impacts of targets, 1 of the task.
	if n := objects(a); n != 8 {
		t.Errorf("objects = %d, want 8", n)
	}

	b[0].Rels[1].TargetImpacts = b[0].Rels[1].TargetImpacts[1:] // DEPENDS_ON's target loses one
	if fingerprint(a) == fingerprint(b) {
		t.Error("a missing file impact went unnoticed")
	}
}

func TestDecodeDataRefusesErrors(t *testing.T) {
	var v map[string]any
	for _, body := range []string{`{"errors":[{"message":"no"}],"data":null}`, `{"data":null}`, `<html>`} {
		if err := decodeData([]byte(body), &v); err == nil {
			t.Errorf("%s decoded without an error", body)
		}
	}
	if _, _, err := createdTask([]byte(`{"data":{"createTask":{"task":{"id":"x","displayId":"D-1"}}}}`)); err != nil {
		t.Error(err)
	}
	if _, _, err := createdTask([]byte(`{"data":{"createTask":null}}`)); err == nil || !strings.Contains(err.Error(), "no task") {
		t.Errorf("a null createTask: %v", err)
	}
}

func TestPostGraphileQueriesUseEachVersionsNames(t *testing.T) {
	if !strings.Contains(pg4Read, "taskListById(id: $id)") || strings.Contains(pg4Read, "rowId") {
		t.Errorf("PostGraphile 4's query:\n%s", pg4Read)
	}
	if !strings.Contains(pg5Read, "taskListByRowId(rowId: $id)") || strings.Contains(pg5Read, "ROW_ID") {
		t.Errorf("PostGraphile 5's query:\n%s", pg5Read)
	}
}
