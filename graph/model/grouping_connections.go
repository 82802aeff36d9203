package model

import "github.com/taskgraph/taskgraph/internal/domain"

// GroupingSuggestionEdge is one suggestion of a GroupingSuggestionConnection.
type GroupingSuggestionEdge struct {
	Cursor string
	Node   *domain.GroupingSuggestion
}

// GroupingSuggestionConnection pages grouping suggestions.
type GroupingSuggestionConnection struct {
	conn[*domain.GroupingSuggestion]
}

// NewGroupingSuggestionConnection wraps a page of suggestions.
func NewGroupingSuggestionConnection(p domain.Page[*domain.GroupingSuggestion]) *GroupingSuggestionConnection {
	return &GroupingSuggestionConnection{conn[*domain.GroupingSuggestion]{p}}
}

// Edges of the page.
func (c *GroupingSuggestionConnection) Edges() []*GroupingSuggestionEdge {
	return edges(c.page, func(cur string, n *domain.GroupingSuggestion) *GroupingSuggestionEdge {
		return &GroupingSuggestionEdge{cur, n}
	})
}
