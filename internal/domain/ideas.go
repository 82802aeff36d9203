package domain

// IdeaStage is where an idea stands in its lifecycle.
type IdeaStage string

// Idea stages, in lifecycle order (ARCHIVED aside).
const (
	IdeaSpark    IdeaStage = "SPARK"
	IdeaClarify  IdeaStage = "CLARIFY"
	IdeaResearch IdeaStage = "RESEARCH"
	IdeaSpecify  IdeaStage = "SPECIFY"
	IdeaPlanned  IdeaStage = "PLANNED"
	IdeaBuilding IdeaStage = "BUILDING"
	IdeaShipped  IdeaStage = "SHIPPED"
	IdeaArchived IdeaStage = "ARCHIVED"
)

// ideaOrder ranks the forward stages.
var ideaOrder = map[IdeaStage]int{IdeaSpark: 1, IdeaClarify: 2, IdeaResearch: 3, IdeaSpecify: 4, IdeaPlanned: 5,
	IdeaBuilding: 6, IdeaShipped: 7}

// Valid reports whether s is a known stage.
func (s IdeaStage) Valid() bool { return s == IdeaArchived || ideaOrder[s] > 0 }

// CanAdvanceIdea: forward by one or more stages, to ARCHIVED from any stage
// but ARCHIVED, nothing out of ARCHIVED.
func CanAdvanceIdea(from, to IdeaStage) bool {
	if from == IdeaArchived {
		return false
	}
	if to == IdeaArchived {
		return true
	}
	return ideaOrder[from] > 0 && ideaOrder[to] > ideaOrder[from]
}

// AdvanceIdeaInput moves an idea along its lifecycle.
type AdvanceIdeaInput struct {
	ID string
	To IdeaStage
}
