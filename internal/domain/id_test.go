package domain_test

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/domain"
)

const uuidA = "0b7c2a1e-5d4f-4e3a-9c8b-7a6f5e4d3c2b"

func TestGlobalIDRoundTrip(t *testing.T) {
	kinds := []domain.Kind{domain.KindUser, domain.KindAPIToken, domain.KindProject, domain.KindIdea,
		domain.KindTask, domain.KindTaskList, domain.KindTaskListItem, domain.KindRelationship,
		domain.KindStateChange, domain.KindTaskBlock, domain.KindTemplate, domain.KindFileImpact,
		domain.KindParallelismAnalysis}
	seen := map[string]bool{}
	for _, k := range kinds {
		gid := domain.GlobalID(k, uuidA)
		require.NotContains(t, gid, uuidA, "global ids are opaque")
		require.NotContains(t, gid, "=", "no padding")
		require.False(t, seen[gid], "kinds give distinct ids")
		seen[gid] = true
		kind, id, ok := domain.ParseGlobalID(gid)
		require.True(t, ok, k)
		require.Equal(t, k, kind)
		require.Equal(t, uuidA, id)

		got, err := domain.DecodeID(k, gid, "id")
		require.NoError(t, err)
		require.Equal(t, uuidA, got)
	}
	require.Equal(t, "", domain.GlobalID(domain.KindTask, ""))
	upper := "0B7C2A1E-5D4F-4E3A-9C8B-7A6F5E4D3C2B"
	_, id, ok := domain.ParseGlobalID(domain.GlobalID(domain.KindTask, upper))
	require.True(t, ok)
	require.Equal(t, upper, id)
	// base64url of "Kind:id", ids longer than the stack buffer included,
	// in one allocation.
	long := uuidA + uuidA + uuidA
	for _, id := range []string{uuidA, long} {
		require.Equal(t, base64.RawURLEncoding.EncodeToString([]byte("ParallelismAnalysis:"+id)),
			domain.GlobalID(domain.KindParallelismAnalysis, id))
	}
	require.Equal(t, 1.0, testing.AllocsPerRun(100, func() { domain.GlobalID(domain.KindTask, uuidA) }))
}

func TestEntityGlobalIDs(t *testing.T) {
	nodes := map[domain.Kind]domain.Node{
		domain.KindUser: &domain.User{ID: uuidA}, domain.KindAPIToken: &domain.APIToken{ID: uuidA},
		domain.KindProject: &domain.Project{ID: uuidA}, domain.KindIdea: &domain.Idea{ID: uuidA},
		domain.KindTask: &domain.Task{ID: uuidA}, domain.KindTaskList: &domain.TaskList{ID: uuidA},
		domain.KindTaskListItem: &domain.TaskListItem{ID: uuidA}, domain.KindRelationship: &domain.TaskRelationship{ID: uuidA},
		domain.KindStateChange: &domain.TaskStateChange{ID: uuidA}, domain.KindTaskBlock: &domain.TaskBlock{ID: uuidA},
		domain.KindTemplate: &domain.TaskTemplate{ID: uuidA}, domain.KindFileImpact: &domain.TaskFileImpact{ID: uuidA},
		domain.KindParallelismAnalysis: &domain.ParallelismAnalysis{ID: uuidA},
	}
	for kind, n := range nodes {
		require.Equal(t, domain.GlobalID(kind, uuidA), n.GlobalID(), kind)
	}
}

func TestParseGlobalIDMalformed(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tests := map[string]string{
		"empty":             "",
		"not base64":        "!!!not-base64!!!",
		"std padding":       base64.URLEncoding.EncodeToString([]byte("Task:" + uuidA)),
		"no colon":          enc("Task" + uuidA),
		"empty kind":        enc(":" + uuidA),
		"empty id":          enc("Task:"),
		"id not a uuid":     enc("Task:123"),
		"uuid too long":     enc("Task:" + uuidA + "0"),
		"uuid bad dash":     enc("Task:0b7c2a1e55d4f-4e3a-9c8b-7a6f5e4d3c2b"),
		"uuid bad hex":      enc("Task:0b7c2a1e-5d4f-4e3a-9c8b-7a6f5e4d3c2g"),
		"raw uuid":          uuidA,
		"sql in id":         enc("Task:' OR 1=1 --"),
		"second colon part": enc("Task:" + uuidA[:35] + ":"),
	}
	for name, gid := range tests {
		t.Run(name, func(t *testing.T) {
			_, _, ok := domain.ParseGlobalID(gid)
			require.False(t, ok)
			_, err := domain.DecodeID(domain.KindTask, gid, "taskId")
			e, isDomain := domain.AsError(err)
			require.True(t, isDomain)
			require.Equal(t, domain.CodeBadUserInput, e.Code)
			require.Equal(t, "taskId", e.Field)
		})
	}
}

func TestDecodeIDWrongKindIsNotFound(t *testing.T) {
	_, err := domain.DecodeID(domain.KindTask, domain.GlobalID(domain.KindProject, uuidA), "taskId")
	require.Equal(t, domain.CodeNotFound, domain.ErrorCode(err))
}

func TestDecodeOptionalID(t *testing.T) {
	got, err := domain.DecodeOptionalID(domain.KindTask, nil, "parentTaskId")
	require.NoError(t, err)
	require.Nil(t, got)

	gid := domain.GlobalID(domain.KindTask, uuidA)
	got, err = domain.DecodeOptionalID(domain.KindTask, &gid, "parentTaskId")
	require.NoError(t, err)
	require.Equal(t, uuidA, *got)

	bad := "nope"
	_, err = domain.DecodeOptionalID(domain.KindTask, &bad, "parentTaskId")
	e, _ := domain.AsError(err)
	require.Equal(t, domain.CodeBadUserInput, e.Code)
	require.Equal(t, "parentTaskId", e.Field)
}

func TestEmbedding(t *testing.T) {
	require.Nil(t, domain.EncodeEmbedding(nil))
	require.Nil(t, domain.EncodeEmbedding([]float64{}))
	require.Nil(t, (&domain.Task{}).EmbeddingVector())

	vec := []float64{0, 1, -1, 0.5, -0.25, 1e-3, 3.1415927, math.MaxFloat32}
	b := domain.EncodeEmbedding(vec)
	require.Len(t, b, 4*len(vec))
	// little-endian float32: 1.0 is 0x3f800000
	require.Equal(t, []byte{0x00, 0x00, 0x80, 0x3f}, b[4:8])
	got := (&domain.Task{Embedding: b}).EmbeddingVector()
	require.Len(t, got, len(vec))
	for i := range vec {
		require.InDelta(t, vec[i], got[i], math.Abs(vec[i])*1e-6+1e-9, i)
		require.Equal(t, float32(vec[i]), float32(got[i]), "exactly the float32 value")
		require.Equal(t, strconv.FormatFloat(float64(float32(vec[i])), 'g', -1, 32), strconv.FormatFloat(got[i], 'g', -1, 64),
			"read back in the float32's shortest decimal form")
	}
	// 0.1 reads back as 0.1, not 0.10000000149011612.
	require.Equal(t, []float64{0.1, 0.2}, domain.DecodeEmbedding(domain.EncodeEmbedding([]float64{0.1, 0.2})))
}

func TestErrors(t *testing.T) {
	e := domain.InputError("title", "%s must not be empty", "title")
	require.Equal(t, "BAD_USER_INPUT: title must not be empty (field title)", e.Error())
	require.Equal(t, "NOT_FOUND: task not found", domain.NotFound("task").Error())
	require.Equal(t, domain.CodeForbidden, domain.Forbidden("no %d", 1).Code)
	require.Equal(t, domain.CodeInternal, domain.ErrorCode(base64.CorruptInputError(1)))
	require.Equal(t, domain.CodeConflict, domain.ErrorCode(wrap{domain.Errorf(domain.CodeConflict, "x")}))
	_, ok := domain.AsError(base64.CorruptInputError(1))
	require.False(t, ok)
}

type wrap struct{ err error }

func (w wrap) Error() string { return "wrapped: " + w.err.Error() }
func (w wrap) Unwrap() error { return w.err }

func TestDecodeIDEchoesABoundedValue(t *testing.T) {
	long := strings.Repeat("é", 50_000)
	_, err := domain.DecodeID(domain.KindSuite, long, "suite")
	e, ok := domain.AsError(err)
	if !ok || e.Code != domain.CodeBadUserInput || e.Field != "suite" {
		t.Fatalf("want BAD_USER_INPUT on suite, got %v", err)
	}
	if len(e.Message) > 200 || !strings.Contains(e.Message, "(100000 bytes)") {
		t.Fatalf("the message repeats too much or does not say how long the value was: %d bytes: %.120s", len(e.Message), e.Message)
	}
	if _, err := domain.DecodeID(domain.KindSuite, "short", "suite"); err == nil || !strings.Contains(err.Error(), `"short" is not a valid id`) {
		t.Fatalf("a short value is repeated whole: %v", err)
	}
}
