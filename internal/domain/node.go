package domain

// Node is any entity with a global id (the GraphQL Node interface).
type Node interface {
	GlobalID() string
}

// GlobalID implementations: the id clients see for each entity.
func (u *User) GlobalID() string             { return GlobalID(KindUser, u.ID) }
func (t *APIToken) GlobalID() string         { return GlobalID(KindAPIToken, t.ID) }
func (p *Project) GlobalID() string          { return GlobalID(KindProject, p.ID) }
func (i *Idea) GlobalID() string             { return GlobalID(KindIdea, i.ID) }
func (t *Task) GlobalID() string             { return GlobalID(KindTask, t.ID) }
func (l *TaskList) GlobalID() string         { return GlobalID(KindTaskList, l.ID) }
func (i *TaskListItem) GlobalID() string     { return GlobalID(KindTaskListItem, i.ID) }
func (r *TaskRelationship) GlobalID() string { return GlobalID(KindRelationship, r.ID) }
func (c *TaskStateChange) GlobalID() string  { return GlobalID(KindStateChange, c.ID) }
func (b *TaskBlock) GlobalID() string        { return GlobalID(KindTaskBlock, b.ID) }
func (t *TaskTemplate) GlobalID() string     { return GlobalID(KindTemplate, t.ID) }
func (f *TaskFileImpact) GlobalID() string   { return GlobalID(KindFileImpact, f.ID) }

// IsResolved reports whether the block has been resolved.
func (b *TaskBlock) IsResolved() bool { return b.ResolvedAt != nil }

// EmbeddingVector decodes the stored embedding (see DecodeEmbedding).
func (t *Task) EmbeddingVector() []float64 { return DecodeEmbedding(t.Embedding) }
