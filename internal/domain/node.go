package domain

import (
	"encoding/binary"
	"math"
)

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

// EmbeddingVector decodes the stored embedding (little-endian float32s).
func (t *Task) EmbeddingVector() []float64 {
	if len(t.Embedding) == 0 {
		return nil
	}
	out := make([]float64, len(t.Embedding)/4)
	for i := range out {
		out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(t.Embedding[i*4:])))
	}
	return out
}

// EncodeEmbedding is the stored form of an embedding vector.
func EncodeEmbedding(v []float64) []byte {
	if len(v) == 0 {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[i*4:], math.Float32bits(float32(f)))
	}
	return b
}
