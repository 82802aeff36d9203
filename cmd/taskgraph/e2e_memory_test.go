package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// Agent memory end to end, on both databases: lessons recorded again are
// reinforced, embeddings round-trip as float32 with one dimension per model
// and project, similarTasks and lessons(similarTo:) rank by cosine (checked
// against a brute-force computation), grouping compares vectors, and the
// ReAct step event carries the observation, the error and the action data.

const (
	memoryLessonMutation = `mutation($in: RecordLessonInput!) { recordLesson(input: $in) {
		deduplicated lesson { id confidence reinforcements whatWorked embeddingModel embedding } } }`
	similarTasksQuery = `query($p: ID!, $e: [Float!], $t: ID, $m: String!, $first: Int, $min: Float) {
		similarTasks(projectId: $p, embedding: $e, taskId: $t, embeddingModel: $m, first: $first, minScore: $min) {
			score task { id title } } }`
)

// TestMemoryLessonReinforcement: the same lesson (project, tool, context,
// lesson) recorded again is returned deduplicated with the higher confidence
// and one more reinforcement; concurrent identical records make one lesson
// counting every record.
func TestMemoryLessonReinforcement(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newSessionFixture(t, s, nil)
		in := M{"projectId": f.project, "context": "Calling the billing API", "whatWorked": "backing off",
			"lesson": "Back off on HTTP 429", "toolName": "http", "confidence": 0.5}
		d := s.query(t, f.agent, memoryLessonMutation, M{"in": in}).at("recordLesson")
		require.False(t, d.B("deduplicated"))
		require.Equal(t, 1, d.N("lesson.reinforcements"))
		id := d.S("lesson.id")

		in["confidence"], in["whatWorked"] = 0.9, "waiting for Retry-After"
		d = s.query(t, f.agent, memoryLessonMutation, M{"in": in}).at("recordLesson")
		require.True(t, d.B("deduplicated"))
		require.Equal(t, id, d.S("lesson.id"))
		require.Equal(t, 0.9, d.F("lesson.confidence"), "raised to the higher")
		require.Equal(t, 2, d.N("lesson.reinforcements"))
		require.Equal(t, "backing off", d.S("lesson.whatWorked"), "the first record's texts stay")

		in["confidence"] = 0.3
		d = s.query(t, f.agent, memoryLessonMutation, M{"in": in}).at("recordLesson")
		require.Equal(t, 0.9, d.F("lesson.confidence"), "never lowered")
		require.Equal(t, 3, d.N("lesson.reinforcements"))

		// Another tool is another lesson; spacing and case are not.
		in["toolName"] = "curl"
		require.False(t, s.query(t, f.agent, memoryLessonMutation, M{"in": in}).B("recordLesson.deduplicated"))
		in["toolName"], in["lesson"] = "http", "  back OFF on http 429 "
		require.Equal(t, id, s.query(t, f.agent, memoryLessonMutation, M{"in": in}).S("recordLesson.lesson.id"))

		// Concurrent identical records: one lesson, every record counted.
		const n = 6
		same := M{"projectId": f.project, "context": "Concurrent", "whatWorked": "w", "lesson": "Recorded at once", "confidence": 0.4}
		rs := concurrently(t, n, func(i int) (gqlResponse, error) {
			c := cloneM(same)
			c["confidence"] = 0.4 + float64(i)/100
			return s.post(f.agent, memoryLessonMutation, M{"in": c})
		})
		ids, fresh := map[string]bool{}, 0
		for _, r := range rs {
			var d struct {
				RecordLesson struct {
					Deduplicated bool
					Lesson       struct{ ID string }
				}
			}
			require.NoError(t, json.Unmarshal(r.Data, &d))
			ids[d.RecordLesson.Lesson.ID] = true
			if !d.RecordLesson.Deduplicated {
				fresh++
			}
		}
		require.Len(t, ids, 1, "one lesson")
		require.Equal(t, 1, fresh, "inserted once")
		d = s.query(t, f.agent, `query($p: ID!) { lessons(projectId: $p, query: "recorded at once") { nodes { reinforcements confidence } } }`,
			M{"p": f.project}).at("lessons")
		require.Equal(t, n, d.N("nodes.0.reinforcements"))
		require.InDelta(t, 0.4+float64(n-1)/100, d.F("nodes.0.confidence"), 1e-9)
	})
}

func cloneM(m M) M {
	out := make(M, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestMemoryEmbeddings: vectors read back as the float32 values given (0.1
// is 0.1); one dimension per model and project; limits and pairing.
func TestMemoryEmbeddings(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		project := s.createProject(t, s.AdminToken, fmt.Sprintf("emb%04d", planSlugs.Add(1)))
		other := s.createProject(t, s.AdminToken, fmt.Sprintf("emb%04d", planSlugs.Add(1)))
		vec := []float64{0.1, -0.2, 0.3333, 1e-7}
		task := s.createTask(t, s.AdminToken, project, "With a vector", M{"embedding": vec, "embeddingModel": "mini"})
		d := s.query(t, s.AdminToken, `query($id: ID!) { task(id: $id) { embedding embeddingModel } }`, M{"id": task}).at("task")
		require.Equal(t, "mini", d.S("embeddingModel"))
		var got []float64
		for _, v := range d.L("embedding") {
			got = append(got, v.v.(float64))
		}
		require.Equal(t, vec, got, "float32 read back in its shortest form")

		create := `mutation($in: CreateTaskInput!) { createTask(input: $in) { task { id } } }`
		bad := func(in M, field string) {
			t.Helper()
			in["projectId"], in["title"] = project, "bad"
			r := s.requireCode(t, s.AdminToken, create, M{"in": in}, "BAD_USER_INPUT")
			require.Equal(t, field, r.ext("field"), "%v", in)
		}
		bad(M{"embedding": []float64{1, 2}, "embeddingModel": "mini"}, "embedding")
		bad(M{"embedding": []float64{1, 2, 3, 4}}, "embeddingModel")
		bad(M{"embeddingModel": "mini"}, "embeddingModel")
		bad(M{"embedding": make([]float64, 4097), "embeddingModel": "big"}, "embedding")
		bad(M{"embedding": []float64{}, "embeddingModel": "big"}, "embedding")
		bad(M{"embedding": []float64{1e39}, "embeddingModel": "big"}, "embedding")
		// A vector holding a null, a string (a Float to gqlparser, refused
		// here for its length) or a number beyond float64 is refused alike
		// whether its document is new to the server or cached (when the
		// server first makes a list of numbers one []float64).
		for i, elem := range []any{nil, "0.5", json.Number("1e999")} {
			doc := fmt.Sprintf("%s # vector %d", create, i)
			in := M{"projectId": project, "title": "bad", "embedding": []any{0.5, elem, 0.25}, "embeddingModel": "mini"}
			first, err := s.post(s.AdminToken, doc, M{"in": in})
			require.NoError(t, err)
			require.NotEmpty(t, first.Errors, "%v", elem)
			cached, err := s.post(s.AdminToken, doc, M{"in": in})
			require.NoError(t, err)
			require.Equal(t, first, cached, "%v", elem)
		}
		// Another model, or the same model in another project, has its own dimension.
		s.createTask(t, s.AdminToken, project, "Other model", M{"embedding": []float64{1, 2}, "embeddingModel": "tiny"})
		s.createTask(t, s.AdminToken, other, "Other project", M{"embedding": []float64{1, 2}, "embeddingModel": "mini"})
		s.createTask(t, s.AdminToken, project, "Largest", M{"embedding": make([]float64, 4096), "embeddingModel": "big"})

		update := `mutation($in: UpdateTaskInput!) { updateTask(input: $in) { task { embedding embeddingModel } } }`
		r := s.requireCode(t, s.AdminToken, update, M{"in": M{"id": task, "embedding": []float64{1, 2, 3}}}, "BAD_USER_INPUT")
		require.Equal(t, "embedding", r.ext("field"))
		d = s.query(t, s.AdminToken, update, M{"in": M{"id": task, "embedding": []float64{0.5, 0.25, 0, 1}}}).at("updateTask.task")
		require.Equal(t, "mini", d.S("embeddingModel"), "the model is kept")
		r = s.requireCode(t, s.AdminToken, update, M{"in": M{"id": task, "embeddingModel": "tiny"}}, "BAD_USER_INPUT")
		require.Equal(t, "embedding", r.ext("field"), "its vector has not tiny's dimension")

		// Lessons: the same rules; the global lessons are a scope of their own.
		lesson := M{"projectId": project, "context": "c", "whatWorked": "w", "lesson": "With a vector", "confidence": 0.5,
			"embedding": []float64{0.1, 0.2, 0.3, 0.4}, "embeddingModel": "mini"}
		d = s.query(t, s.AdminToken, memoryLessonMutation, M{"in": lesson}).at("recordLesson.lesson")
		require.Equal(t, []any{0.1, 0.2, 0.3, 0.4}, d.at("embedding").v)
		lesson["lesson"], lesson["embedding"] = "Wrong size", []float64{0.1}
		r = s.requireCode(t, s.AdminToken, memoryLessonMutation, M{"in": lesson}, "BAD_USER_INPUT")
		require.Equal(t, "embedding", r.ext("field"))
		delete(lesson, "projectId")
		require.Equal(t, []any{0.1}, s.query(t, s.AdminToken, memoryLessonMutation, M{"in": lesson}).at("recordLesson.lesson.embedding").v)
	})
}

// memoryVectors are n random vectors of dim values, as float32.
func memoryVectors(seed uint64, n, dim int) [][]float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, dim)
		for k := range out[i] {
			out[i][k] = float64(float32(r.Float64()*2 - 1))
		}
	}
	return out
}

func bruteCosine(a, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}

// TestMemorySimilarTasks: similarTasks by a vector and by a task's vector
// ranks as a brute-force cosine does; first, minScore, other models and
// other projects; bad arguments; visibility; a bounded number of
// statements whatever the number of tasks.
func TestMemorySimilarTasks(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		project := s.createProject(t, s.AdminToken, fmt.Sprintf("sim%04d", planSlugs.Add(1)))
		vecs := memoryVectors(1, 20, 16)
		byID := map[string][]float64{}
		var taskIDs []string
		for i, v := range vecs {
			id := s.createTask(t, s.AdminToken, project, fmt.Sprintf("task %02d", i), M{"embedding": v, "embeddingModel": "m"})
			byID[id] = v
			taskIDs = append(taskIDs, id)
		}
		s.createTask(t, s.AdminToken, project, "other model", M{"embedding": vecs[0][:4], "embeddingModel": "m4"})
		s.createTask(t, s.AdminToken, project, "no vector", nil)

		want := func(q []float64, skip string, first int, min float64) []string {
			type sc struct {
				id    string
				score float64
			}
			var all []sc
			for id, v := range byID {
				if c := bruteCosine(q, v); id != skip && c >= min {
					all = append(all, sc{id, c})
				}
			}
			sort.Slice(all, func(i, j int) bool { return all[i].score > all[j].score })
			var out []string
			for i := 0; i < len(all) && i < first; i++ {
				out = append(out, all[i].id)
			}
			return out
		}
		q := memoryVectors(2, 1, 16)[0]
		d := s.query(t, s.AdminToken, similarTasksQuery, M{"p": project, "e": q, "m": "m"})
		require.Equal(t, want(q, "", 10, -1), d.Col("similarTasks", "task.id"))
		require.InDelta(t, bruteCosine(q, byID[d.S("similarTasks.0.task.id")]), d.F("similarTasks.0.score"), 1e-6)

		d = s.query(t, s.AdminToken, similarTasksQuery, M{"p": project, "t": taskIDs[3], "m": "m", "first": 5})
		require.Equal(t, want(vecs[3], taskIDs[3], 5, -1), d.Col("similarTasks", "task.id"), "by a task's vector, itself left out")
		d = s.query(t, s.AdminToken, similarTasksQuery, M{"p": project, "e": vecs[3], "m": "m", "first": 3})
		require.Equal(t, taskIDs[3], d.S("similarTasks.0.task.id"))
		require.InDelta(t, 1, d.F("similarTasks.0.score"), 1e-6)
		d = s.query(t, s.AdminToken, similarTasksQuery, M{"p": project, "e": q, "m": "m", "first": 100, "min": 0.2})
		require.Equal(t, want(q, "", 100, 0.2), d.Col("similarTasks", "task.id"))
		require.Empty(t, s.query(t, s.AdminToken, similarTasksQuery, M{"p": project, "e": q, "m": "unknown"}).L("similarTasks"))

		// The server keeps the vectors between searches: a changed vector
		// and a new one count at once (the search before warmed the cache).
		s.query(t, s.AdminToken, `mutation($id: ID!, $e: [Float!]) { updateTask(input: {id: $id, embedding: $e, embeddingModel: "m"}) { task { id } } }`,
			M{"id": taskIDs[7], "e": q})
		byID[taskIDs[7]] = q
		d = s.query(t, s.AdminToken, similarTasksQuery, M{"p": project, "e": q, "m": "m", "first": 3})
		require.Equal(t, taskIDs[7], d.S("similarTasks.0.task.id"), "the changed vector is read")
		require.Equal(t, want(q, "", 3, -1), d.Col("similarTasks", "task.id"))
		fresh := s.createTask(t, s.AdminToken, project, "new twin", M{"embedding": q, "embeddingModel": "m"})
		byID[fresh] = q
		d = s.query(t, s.AdminToken, similarTasksQuery, M{"p": project, "e": q, "m": "m", "first": 3})
		require.ElementsMatch(t, []string{taskIDs[7], fresh}, d.Col("similarTasks", "task.id")[:2], "the new vector is read")

		// Bad arguments.
		for _, c := range []struct {
			vars  M
			field string
		}{
			{M{"p": project, "m": "m"}, "embedding"},
			{M{"p": project, "e": q, "t": taskIDs[0], "m": "m"}, "embedding"},
			{M{"p": project, "e": q[:3], "m": "m"}, "embedding"},
			{M{"p": project, "t": taskIDs[0], "m": "m4"}, "taskId"},
			{M{"p": project, "e": q, "m": "m", "first": 101}, "first"},
			{M{"p": project, "e": q, "m": "m", "min": 2}, "minScore"},
			{M{"p": project, "e": q, "m": " "}, "embeddingModel"},
		} {
			r := s.requireCode(t, s.AdminToken, similarTasksQuery, c.vars, "BAD_USER_INPUT")
			require.Equal(t, c.field, r.ext("field"), "%v", c.vars)
		}
		// Visibility: another member sees no such project.
		_, member := s.member(t, fmt.Sprintf("simmember%04d", planSlugs.Add(1)))
		s.requireCode(t, member, similarTasksQuery, M{"p": project, "e": q, "m": "m"}, "NOT_FOUND")

		// Statements: the same for 20 tasks and 60; a search after a change
		// reads the vectors again (one page), the next one only their stamp.
		count := func() int64 {
			before := s.DB.Statements()
			s.query(t, s.AdminToken, similarTasksQuery, M{"p": project, "e": q, "m": "m", "first": 10})
			return s.DB.Statements() - before
		}
		count() // warm the token's last-used mark
		twenty := count()
		for i, v := range memoryVectors(3, 40, 16) {
			s.createTask(t, s.AdminToken, project, fmt.Sprintf("more %02d", i), M{"embedding": v, "embeddingModel": "m"})
		}
		require.Equal(t, twenty+1, count(), "statements for 60 tasks, the vectors read again after the change")
		require.Equal(t, twenty, count(), "statements for 20 tasks vs 60, the vectors kept")
		require.LessOrEqual(t, twenty, int64(6))
	})
}

// TestMemoryLessonsSimilarTo: lessons(similarTo:) ranks the lessons with a
// vector of the model by cosine × confidence, pages by position, and with a
// text query keeps those matching it too.
func TestMemoryLessonsSimilarTo(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newSessionFixture(t, s, nil)
		vecs := memoryVectors(4, 12, 8)
		type lesson struct {
			id         string
			confidence float64
			vec        []float64
			rate       bool
		}
		var all []lesson
		for i, v := range vecs {
			text := fmt.Sprintf("Lesson %d about caching", i)
			if i%3 == 0 {
				text = fmt.Sprintf("Lesson %d about throttling", i)
			}
			c := 0.3 + float64(i)/20
			id := s.query(t, f.agent, memoryLessonMutation, M{"in": M{"projectId": f.project, "context": "ctx", "whatWorked": "w",
				"lesson": text, "confidence": c, "embedding": v, "embeddingModel": "m"}}).S("recordLesson.lesson.id")
			all = append(all, lesson{id, c, v, i%3 == 0})
		}
		s.query(t, f.agent, memoryLessonMutation, M{"in": M{"projectId": f.project, "context": "ctx", "whatWorked": "w",
			"lesson": "No vector about throttling", "confidence": 1}})
		q := memoryVectors(5, 1, 8)[0]
		want := func(onlyRate bool) []string {
			var ls []lesson
			for _, l := range all {
				if !onlyRate || l.rate {
					ls = append(ls, l)
				}
			}
			sort.Slice(ls, func(i, j int) bool {
				return bruteCosine(q, ls[i].vec)*ls[i].confidence > bruteCosine(q, ls[j].vec)*ls[j].confidence
			})
			out := make([]string, len(ls))
			for i, l := range ls {
				out[i] = l.id
			}
			return out
		}
		lq := `query($p: ID, $q: String, $e: [Float!]!, $first: Int, $after: String) {
			lessons(projectId: $p, query: $q, similarTo: {embedding: $e, embeddingModel: "m"}, first: $first, after: $after) {
			totalCount nodes { id } pageInfo { hasNextPage endCursor } } }`
		d := s.query(t, f.agent, lq, M{"p": f.project, "e": q, "first": 5}).at("lessons")
		require.Equal(t, 12, d.N("totalCount"))
		require.True(t, d.B("pageInfo.hasNextPage"))
		rest := s.query(t, f.agent, lq, M{"p": f.project, "e": q, "first": 20, "after": d.S("pageInfo.endCursor")}).at("lessons")
		require.False(t, rest.B("pageInfo.hasNextPage"))
		require.Equal(t, want(false), append(d.Col("nodes", "id"), rest.Col("nodes", "id")...))

		// With a text query: only the lessons matching it, same order (the
		// relevance of each matching lesson is the same here: one word).
		d = s.query(t, f.agent, lq, M{"p": f.project, "q": "throttling", "e": q, "first": 20}).at("lessons")
		got := d.Col("nodes", "id")
		require.ElementsMatch(t, want(true), got)
		// Without a project: the caller's lessons; the dimension is checked per project.
		require.Len(t, s.query(t, f.agent, lq, M{"e": q, "first": 20}).L("lessons.nodes"), 12)
		r := s.requireCode(t, f.agent, lq, M{"p": f.project, "e": q[:3]}, "BAD_USER_INPUT")
		require.Equal(t, "similarTo.embedding", r.ext("field"))
	})
}

// TestMemoryGroupingEmbeddings: three tasks whose texts share no word but
// whose vectors agree are grouped by description similarity; a task of
// another model falls back to its words.
func TestMemoryGroupingEmbeddings(t *testing.T) {
	t.Parallel()
	testdb.Run(t, func(t *testing.T, url string) {
		s, _ := startServerWith(t, url, serverOptions{noGroupingBackground: true})
		project := s.createProject(t, s.AdminToken, fmt.Sprintf("gemb%04d", planSlugs.Add(1)))
		var near []string
		for i, title := range []string{"Add login form", "Render chart legend", "Document backups"} {
			near = append(near, s.createTask(t, s.AdminToken, project, title, M{"category": "FEATURE", "inEvaluationQueue": true,
				"embedding": []float64{1, 0.1 * float64(i), 0}, "embeddingModel": "m"}))
		}
		s.createTask(t, s.AdminToken, project, "Tune the cache", M{"category": "FEATURE", "inEvaluationQueue": true,
			"embedding": []float64{0, 0, 1}, "embeddingModel": "m"})
		s.createTask(t, s.AdminToken, project, "Rotate keys", M{"category": "FEATURE", "inEvaluationQueue": true,
			"embedding": []float64{1, 0, 0}, "embeddingModel": "other"})
		d := s.query(t, s.AdminToken, `mutation($p: ID!) { suggestGroupings(input: {projectId: $p, minScore: 0.3}) { suggestions { `+
			suggestionFields+` } } }`, M{"p": project})
		sugs := d.L("suggestGroupings.suggestions")
		require.Len(t, sugs, 1)
		require.ElementsMatch(t, near, ids(sugs[0].L("suggestedTasks"), "id"))
		require.Greater(t, sugs[0].F("breakdown.descriptionSimilarity"), 0.98, "the vectors, not the words")
		require.InDelta(t, 1, sugs[0].F("breakdown.category"), 1e-9)
	})
}

// TestMemoryReActStepEvent: the event of a step carries its action data, its
// error and its observation — cut at 8 KB, with observationTruncated.
func TestMemoryReActStepEvent(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		f := newSessionFixture(t, s, nil)
		s.query(t, f.agent, recordStepMutation, M{"in": M{"sessionId": f.session, "thought": "look", "action": "grep",
			"actionType": "TOOL_CALL", "actionData": M{"pattern": "TODO"}, "observation": M{"matches": 3}, "success": true}})
		big := strings.Repeat("x", 20_000)
		s.query(t, f.agent, recordStepMutation, M{"in": M{"sessionId": f.session, "action": "cat",
			"observation": M{"text": big}, "success": false, "error": "too long"}})
		d := s.query(t, f.agent, `query($p: ID!) { project(id: $p) { events(first: 10, types: [REACT_STEP_RECORDED]) { nodes {
			... on ReActStepRecorded { stepId actionData observation observationTruncated error success } } } } }`,
			M{"p": f.project}).L("project.events.nodes")
		require.Len(t, d, 2)
		require.Equal(t, map[string]any{"pattern": "TODO"}, d[0].at("actionData").v)
		require.Equal(t, map[string]any{"matches": float64(3)}, d[0].at("observation").v)
		require.False(t, d[0].B("observationTruncated"))
		require.True(t, d[0].Null("error"))

		require.Equal(t, "too long", d[1].S("error"))
		require.True(t, d[1].B("observationTruncated"))
		cut := d[1].S("observation")
		require.Len(t, cut, 8<<10)
		require.True(t, strings.HasPrefix(cut, `{"text":"xxx`), cut[:20])
		// The step keeps the whole observation.
		step := s.query(t, f.agent, `query($id: ID!) { agentSession(id: $id) { steps(last: 1) { nodes { observation } } } }`,
			M{"id": f.session})
		require.Equal(t, big, step.S("agentSession.steps.nodes.0.observation.text"))
	})
}
