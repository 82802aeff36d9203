package domain_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

func TestCheckEmbedding(t *testing.T) {
	m := "m"
	_, err := domain.CheckEmbedding("embedding", []float64{1, 2}, "embeddingModel", nil)
	requireField(t, err, "embeddingModel")
	for _, bad := range [][]float64{{}, make([]float64, domain.MaxEmbeddingDims+1), {math.NaN()}, {math.Inf(1)}, {1e39}} {
		_, err := domain.CheckEmbedding("embedding", bad, "embeddingModel", &m)
		requireField(t, err, "embedding")
	}
	got, err := domain.CheckEmbedding("embedding", make([]float64, domain.MaxEmbeddingDims), "embeddingModel", ptr(" m "))
	require.NoError(t, err)
	require.Equal(t, "m", got)
	requireField(t, domain.CheckDimension("embedding", "m", 3, 4), "embedding")
	require.NoError(t, domain.CheckDimension("embedding", "m", 4, 4))
}

func requireField(t *testing.T, err error, field string) {
	t.Helper()
	var e *domain.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, domain.CodeBadUserInput, e.Code)
	require.Equal(t, field, e.Field)
}

func ptr[T any](v T) *T { return &v }

func TestCosineAndTopN(t *testing.T) {
	a := []float32{1, 2, 3}
	require.InDelta(t, 1, domain.Cosine(a, domain.Norm(a), []float32{2, 4, 6}), 1e-12)
	require.InDelta(t, -1, domain.Cosine(a, domain.Norm(a), []float32{-1, -2, -3}), 1e-12)
	require.Zero(t, domain.Cosine(a, domain.Norm(a), []float32{0, 0, 0}))

	top := domain.NewTopN(3)
	for i, s := range []float64{0.1, 0.9, 0.5, 0.9, -0.2, 0.7} {
		top.Add(domain.Scored{ID: string(rune('a' + i)), Score: s})
	}
	require.Equal(t, []domain.Scored{{ID: "b", Score: 0.9}, {ID: "d", Score: 0.9}, {ID: "f", Score: 0.7}}, top.Sorted())
	none := domain.NewTopN(0)
	none.Add(domain.Scored{ID: "x", Score: 1})
	require.Empty(t, none.Sorted())
}

func TestReActStepEventObservation(t *testing.T) {
	s := &domain.AgentSession{ID: "s", ProjectID: "p"}
	decode := func(ev *domain.Event) domain.ReActStepRecordedEvent {
		var d domain.ReActStepRecordedEvent
		require.NoError(t, json.Unmarshal(ev.Payload, &d))
		return d
	}
	small := domain.JSON(`{"rows":3}`)
	d := decode(domain.NewReActStepRecorded(s, &domain.ReActStep{StepID: 1, Observation: small,
		ActionData: domain.JSON(`{"q":"x"}`), Error: ptr("boom")}, time.Time{}))
	require.JSONEq(t, `{"rows":3}`, string(d.Observation))
	require.False(t, d.ObservationTruncated)
	require.JSONEq(t, `{"q":"x"}`, string(d.ActionData))
	require.Equal(t, "boom", *d.Error)

	// Over 8 KB: a string of the text's first 8 KB, cut between characters.
	big, _ := json.Marshal(strings.Repeat("é", 5000)) // 10,002 bytes
	d = decode(domain.NewReActStepRecorded(s, &domain.ReActStep{StepID: 2, Observation: domain.JSON(big)}, time.Time{}))
	require.True(t, d.ObservationTruncated)
	var cut string
	require.NoError(t, json.Unmarshal(d.Observation, &cut))
	require.Equal(t, string(big[:domain.MaxEventObservation-1]), cut, "1 quote + 4095 two-byte characters")
}
