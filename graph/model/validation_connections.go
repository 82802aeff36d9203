package model

import "github.com/taskgraph/taskgraph/internal/domain"

// Connections of validation rules (graph/schema/validation.graphqls).

// ValidationRuleEdge is one rule of a ValidationRuleConnection.
type ValidationRuleEdge struct {
	Cursor string
	Node   *domain.ValidationRule
}

// ValidationRuleConnection pages validation rules.
type ValidationRuleConnection struct{ conn[*domain.ValidationRule] }

// NewValidationRuleConnection wraps a page of rules.
func NewValidationRuleConnection(p domain.Page[*domain.ValidationRule]) *ValidationRuleConnection {
	return &ValidationRuleConnection{conn[*domain.ValidationRule]{p}}
}

// Edges of the page.
func (c *ValidationRuleConnection) Edges() []*ValidationRuleEdge {
	return edges(c.page, func(cur string, n *domain.ValidationRule) *ValidationRuleEdge {
		return &ValidationRuleEdge{cur, n}
	})
}
