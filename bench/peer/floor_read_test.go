package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The floor's answer objects encode as Taskgraph's answer to the shape:
// ids only where the shape asks for them, an empty list as [], a field the
// shape does not ask for left out.
func TestFloorAnswerEncodesTheShapes(t *testing.T) {
	target := func(ids bool) *floorTask {
		tg := &floorTask{rowID: "t2", DisplayID: "D-2", Title: "b", Status: "PENDING"}
		if ids {
			tg.ID = "t2"
		}
		return tg
	}
	impacts := func(ids bool) *[]floorImpact {
		im := floorImpact{FilePath: "a.go", Operation: "READ"}
		if ids {
			im.ID = "f1"
		}
		return &[]floorImpact{im}
	}
	empty := []floorImpact{}
	for _, c := range []struct {
		name string
		ids  bool
		want string
	}{
		{"full", true, `{"data":{"taskList":{"tasks":{"nodes":[{"id":"t1","displayId":"D-1","title":"a","status":"PENDING","relationships":[{"id":"r1","type":"BLOCKS","target":{"id":"t2","displayId":"D-2","title":"b","status":"PENDING","fileImpacts":[]}}],"fileImpacts":[{"id":"f1","filePath":"a.go","operation":"READ"}]}]}}}}`},
		{"light", false, `{"data":{"taskList":{"tasks":{"nodes":[{"id":"t1","displayId":"D-1","title":"a","status":"PENDING","relationships":[{"type":"BLOCKS","target":{"displayId":"D-2","title":"b","status":"PENDING","fileImpacts":[]}}],"fileImpacts":[{"filePath":"a.go","operation":"READ"}]}]}}}}`},
	} {
		tg := target(c.ids)
		tg.FileImpacts = &empty
		rel := floorRel{Type: "BLOCKS", Target: tg}
		if c.ids {
			rel.ID = "r1"
		}
		task := &floorTask{ID: "t1", rowID: "t1", DisplayID: "D-1", Title: "a", Status: "PENDING",
			Relationships: &[]floorRel{rel}, FileImpacts: impacts(c.ids)}
		got, err := json.Marshal(floorAnswer([]*floorTask{task}))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	// deep: the targets' targets have no relationships field at all.
	leaf := target(true)
	mid := target(true)
	mid.Relationships = &[]floorRel{{ID: "r2", Type: "DEPENDS_ON", Target: leaf}}
	got, _ := json.Marshal(floorAnswer([]*floorTask{{ID: "t1", DisplayID: "D-1", Relationships: &[]floorRel{{ID: "r1", Type: "BLOCKS", Target: mid}}}}))
	if strings.Count(string(got), `"relationships"`) != 2 || strings.Contains(string(got), "fileImpacts") {
		t.Errorf("deep: %s", got)
	}
}
