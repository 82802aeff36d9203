package model

import "github.com/taskgraph/taskgraph/internal/domain"

// QuestionEdge is one question of a QuestionConnection.
type QuestionEdge struct {
	Cursor string
	Node   *domain.Question
}

// QuestionConnection pages questions.
type QuestionConnection struct{ conn[*domain.Question] }

// NewQuestionConnection wraps a page of questions.
func NewQuestionConnection(p domain.Page[*domain.Question]) *QuestionConnection {
	return &QuestionConnection{conn[*domain.Question]{p}}
}

// Edges of the page.
func (c *QuestionConnection) Edges() []*QuestionEdge {
	return edges(c.page, func(cur string, n *domain.Question) *QuestionEdge { return &QuestionEdge{cur, n} })
}
