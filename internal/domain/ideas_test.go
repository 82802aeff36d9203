package domain

import "testing"

func TestCanAdvanceIdea(t *testing.T) {
	for _, c := range []struct {
		from, to IdeaStage
		ok       bool
	}{
		{IdeaSpark, IdeaClarify, true}, {IdeaSpark, IdeaShipped, true}, {IdeaPlanned, IdeaBuilding, true},
		{IdeaClarify, IdeaSpark, false}, {IdeaSpark, IdeaSpark, false}, {IdeaShipped, IdeaArchived, true},
		{IdeaSpark, IdeaArchived, true}, {IdeaArchived, IdeaSpark, false}, {IdeaArchived, IdeaArchived, false},
	} {
		if got := CanAdvanceIdea(c.from, c.to); got != c.ok {
			t.Errorf("%s -> %s: got %v, want %v", c.from, c.to, got, c.ok)
		}
	}
}
