package domain

import (
	"encoding/binary"
	"math"
	"sort"
	"strconv"
)

// Embeddings: vectors a client computes for a task or a lesson with a model
// of its choice, stored as little-endian float32 and compared by cosine.

// Limits of an embedding.
const (
	// MaxEmbeddingDims bounds a vector's length.
	MaxEmbeddingDims = 4096
	// MaxEmbeddingModelLen bounds a model's name.
	MaxEmbeddingModelLen = 200
	// MaxSimilarResults bounds the first of similarTasks.
	MaxSimilarResults = 100
)

// CheckEmbedding validates a vector given in field with its model given in
// modelField: 1..MaxEmbeddingDims finite values and a model name. It returns
// the model's name, trimmed.
func CheckEmbedding(field string, v []float64, modelField string, model *string) (string, error) {
	if err := CheckVector(field, v); err != nil {
		return "", err
	}
	if model == nil {
		return "", InputError(modelField, "an embedding needs its embeddingModel")
	}
	return CheckText(modelField, *model, MaxEmbeddingModelLen, true)
}

// CheckVector validates a vector's values: 1..MaxEmbeddingDims finite
// float32 values.
func CheckVector(field string, v []float64) error {
	if len(v) == 0 {
		return InputError(field, "an embedding has at least one value")
	}
	if len(v) > MaxEmbeddingDims {
		return InputError(field, "an embedding has at most %d values, not %d", MaxEmbeddingDims, len(v))
	}
	for i, f := range v {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > math.MaxFloat32 {
			return InputError(field, "value %d is not a finite float32", i)
		}
	}
	return nil
}

// CheckDimension refuses a vector of dims values for a model whose vectors in
// the same project have want values.
func CheckDimension(field, model string, dims, want int) error {
	if dims != want {
		return &Error{Code: CodeBadUserInput, Field: field,
			Message: "the vectors of model " + strconv.Quote(model) + " in this project have " + strconv.Itoa(want) +
				" values, not " + strconv.Itoa(dims),
			Details: map[string]any{"dimension": want}}
	}
	return nil
}

// EncodeEmbedding is the stored form of an embedding vector: little-endian
// float32 values.
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

// DecodeEmbedding reads a stored vector back. Each float32 becomes the
// float64 with the same shortest decimal form, so that 0.1 stored reads back
// as 0.1, not 0.10000000149011612.
func DecodeEmbedding(b []byte) []float64 {
	if len(b) == 0 {
		return nil
	}
	out := make([]float64, len(b)/4)
	for i := range out {
		f := math.Float32frombits(binary.LittleEndian.Uint32(b[i*4:]))
		out[i], _ = strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	}
	return out
}

// DecodeVector reads a stored vector as float32 values, for scoring, into
// dst (reused when large enough).
func DecodeVector(dst []float32, b []byte) []float32 {
	n := len(b) / 4
	if cap(dst) < n {
		dst = make([]float32, n)
	}
	dst = dst[:n]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[i*4:]))
	}
	return dst
}

// Norm is a vector's Euclidean length.
func Norm(v []float32) float64 {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	return math.Sqrt(s)
}

// Cosine is the cosine similarity of a and b (same length), given a's norm;
// 0 when either is the zero vector.
func Cosine(a []float32, normA float64, b []float32) float64 {
	var dot, nb float64
	for i, f := range b {
		dot += float64(a[i]) * float64(f)
		nb += float64(f) * float64(f)
	}
	if normA == 0 || nb == 0 {
		return 0
	}
	return dot / (normA * math.Sqrt(nb))
}

// CosineNormed is Cosine with b's norm known too (Norm(b)): the same value.
func CosineNormed(a []float32, normA float64, b []float32, normB float64) float64 {
	if normA == 0 || normB == 0 {
		return 0
	}
	var dot float64
	for i, f := range b {
		dot += float64(a[i]) * float64(f)
	}
	return dot / (normA * normB)
}

// TaskSimilarity is a task ranked by similarTasks.
type TaskSimilarity struct {
	Task  *Task
	Score float64
}

// SimilarToInput is the vector the lessons query ranks against.
type SimilarToInput struct {
	Embedding      []float64
	EmbeddingModel string
}

// Scored is a row's id and its score.
type Scored struct {
	ID    string
	Score float64
}

// TopN keeps the n best of the scores added: highest score first, ties by
// id.
type TopN struct {
	n     int
	items []Scored
}

// NewTopN keeps the n best.
func NewTopN(n int) *TopN { return &TopN{n: n, items: make([]Scored, 0, min(n, 1024)+1)} }

func better(a, b Scored) bool { return a.Score > b.Score || a.Score == b.Score && a.ID < b.ID }

// Add offers x.
func (t *TopN) Add(x Scored) {
	if t.n <= 0 || len(t.items) == t.n && !better(x, t.items[len(t.items)-1]) {
		return
	}
	i := sort.Search(len(t.items), func(i int) bool { return better(x, t.items[i]) })
	t.items = append(t.items, Scored{})
	copy(t.items[i+1:], t.items[i:])
	t.items[i] = x
	if len(t.items) > t.n {
		t.items = t.items[:t.n]
	}
}

// Sorted is the best, highest first.
func (t *TopN) Sorted() []Scored { return t.items }
