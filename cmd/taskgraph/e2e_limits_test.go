package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLimits covers LIMIT_EXCEEDED for depth, complexity, parser tokens and
// body size, and BAD_USER_INPUT for inputs gqlgen or the service reject.
func TestLimits(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		admin := s.AdminToken
		project := s.createProject(t, admin, "limits")
		task := s.createTask(t, admin, project, "t", nil)

		t.Run("depth", func(t *testing.T) {
			nested := func(levels int) string {
				return `query($id: ID!) { task(id: $id) { ` + strings.Repeat("parentTask { ", levels) + "id" + strings.Repeat(" }", levels) + ` } }`
			}
			r := s.requireCode(t, admin, nested(19), M{"id": task}, "LIMIT_EXCEEDED") // 21 levels
			require.Contains(t, r.Errors[0].Message, "depth")
			require.True(t, r.dataIsNull())
			d := s.query(t, admin, nested(13), M{"id": task}) // 15 levels: the limit
			require.True(t, d.Null("task.parentTask"))
			// Fragments do not hide depth.
			q := `query($id: ID!) { task(id: $id) { ...A } }
				fragment A on Task { parentTask { parentTask { parentTask { ...B } } } }
				fragment B on Task { parentTask { parentTask { parentTask { ...C } } } }
				fragment C on Task { parentTask { parentTask { parentTask { ...D } } } }
				fragment D on Task { parentTask { parentTask { parentTask { parentTask { parentTask { parentTask { id } } } } } } }`
			s.requireCode(t, admin, q, M{"id": task}, "LIMIT_EXCEEDED")
		})

		t.Run("complexity", func(t *testing.T) {
			r := s.requireCode(t, admin, `{ projects(first: 100) { nodes { id tasks(first: 100) { nodes { id relationships { id type target { id } } } } } } }`, nil, "LIMIT_EXCEEDED")
			require.Contains(t, r.Errors[0].Message, "complexity")
			r = s.requireCode(t, admin, `{ projects(first: 100) { nodes { tasks(first: 100) { nodes { project { taskLists(first: 100) { nodes { id } } } } } } } }`, nil, "LIMIT_EXCEEDED")
			require.Contains(t, r.Errors[0].Message, "complexity")
			// The same shape with small pages is fine.
			d := s.query(t, admin, `{ projects(first: 10) { nodes { id tasks(first: 10) { nodes { id relationships { id type target { id } } } } } } }`, nil)
			require.Len(t, d.L("projects.nodes"), 1)
			require.Len(t, d.L("projects.nodes.0.tasks.nodes"), 1)
			// Page sizes in variables count too.
			s.requireCode(t, admin, `query($n: Int) { projects(first: $n) { nodes { id tasks(first: $n) { nodes { id relationships { id type target { id } } } } } } }`,
				M{"n": 100}, "LIMIT_EXCEEDED")
		})

		t.Run("parser tokens", func(t *testing.T) {
			q := "{ viewer { " + strings.Repeat("id ", 16000) + "} }"
			require.Less(t, len(q), 1<<20)
			s.requireCode(t, admin, q, nil, "LIMIT_EXCEEDED")
		})

		t.Run("document size", func(t *testing.T) {
			// 70 KB, under the token limit: validating it used to take seconds.
			q := "{ viewer { " + strings.Repeat("slug ", 14000) + "} }"
			r := s.requireCode(t, admin, q, nil, "LIMIT_EXCEEDED")
			require.Contains(t, r.Errors[0].Message, "exceeds the limit of 200 per selection set")
			require.True(t, r.dataIsNull())
			q = "{ " + strings.Repeat("viewer { "+strings.Repeat("slug ", 200)+"} ", 6) + "}"
			r = s.requireCode(t, admin, q, nil, "LIMIT_EXCEEDED")
			require.Contains(t, r.Errors[0].Message, "more than 1000 selections")
			// At the limits the query runs.
			q = "{ " + strings.Repeat("viewer { "+strings.Repeat("slug ", 199)+"} ", 5) + "}"
			require.Equal(t, "admin", s.query(t, admin, q, nil).S("viewer.slug"))
		})

		t.Run("body size", func(t *testing.T) {
			marker := "ECHO-ME-NOT-"
			big := `{"query": "{ viewer { id } }", "variables": {"pad": "` + strings.Repeat(marker, (1<<20)/len(marker)+10) + `"}}`
			require.Greater(t, len(big), 1<<20)
			for _, chunked := range []bool{false, true} {
				var body io.Reader = strings.NewReader(big)
				if chunked {
					body = io.MultiReader(strings.NewReader(big)) // no length: sent chunked
				}
				req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", body)
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+admin)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				raw, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "chunked=%v", chunked)
				require.NotContains(t, string(raw), marker, "the body is not echoed")
				require.Less(t, len(raw), 1000)
				var out gqlResponse
				require.NoError(t, json.Unmarshal(raw, &out))
				require.Equal(t, "LIMIT_EXCEEDED", out.code())
			}
			// Just under the limit is served.
			pad := (1 << 20) - 200
			ok := `{"query": "{ viewer { id } }", "variables": {"pad": "` + strings.Repeat("x", pad) + `"}}`
			require.Less(t, len(ok), 1<<20)
			req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(ok))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+admin)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			var out gqlResponse
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Empty(t, out.Errors)
		})

		t.Run("bad user input", func(t *testing.T) {
			create := `mutation($input: CreateTaskInput!) { createTask(input: $input) { task { id } } }`
			for _, tc := range []struct {
				name  string
				query string
				vars  M
				field string
			}{
				{"empty title", create, M{"input": M{"projectId": project, "title": ""}}, "title"},
				{"blank title", create, M{"input": M{"projectId": project, "title": " \t "}}, "title"},
				{"title too long", create, M{"input": M{"projectId": project, "title": strings.Repeat("x", 501)}}, "title"},
				{"bad enum variable", create, M{"input": M{"projectId": project, "title": "x", "priority": "P9"}}, "input.priority"},
				{"bad enum in a list", create, M{"input": M{"projectId": project, "title": "x", "fileImpacts": []M{{"filePath": "a", "operation": "WRITE"}}}}, "input.fileImpacts[0].operation"},
				{"missing required field", create, M{"input": M{"projectId": project}}, "input.title"},
				{"malformed project id", create, M{"input": M{"projectId": "not-an-id", "title": "x"}}, "projectId"},
				{"malformed parent id", create, M{"input": M{"projectId": project, "title": "x", "parentTaskId": "???"}}, "parentTaskId"},
				{"confidence above 1", create, M{"input": M{"projectId": project, "title": "x", "fileImpacts": []M{{"filePath": "a", "operation": "READ", "confidence": 1.5}}}}, "fileImpacts.confidence"},
				{"confidence below 0", create, M{"input": M{"projectId": project, "title": "x", "fileImpacts": []M{{"filePath": "a", "operation": "READ", "confidence": -0.1}}}}, "fileImpacts.confidence"},
				{"duplicate file impact", create, M{"input": M{"projectId": project, "title": "x", "fileImpacts": []M{{"filePath": "a", "operation": "READ"}, {"filePath": "a", "operation": "READ"}}}}, "fileImpacts"},
				{"bad time", create, M{"input": M{"projectId": project, "title": "x", "deadline": "tomorrow"}}, "input.deadline"},
				{"empty acceptance criterion", create, M{"input": M{"projectId": project, "title": "x", "acceptanceCriteria": []string{"ok", ""}}}, "acceptanceCriteria"},
				{"wrong scalar type", `query($n: Int) { tasks(first: $n) { totalCount } }`, M{"n": "ten"}, "n"},
				{"bad enum argument", `query($o: TaskOrder) { tasks(orderBy: $o) { totalCount } }`, M{"o": M{"field": "TITLE", "direction": "ASC"}}, "o.field"},
				{"malformed task id", `{ task(id: "abc") { id } }`, nil, "id"},
				{"malformed list id", `{ taskList(id: "abc") { id } }`, nil, "id"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					r := s.requireCode(t, admin, tc.query, tc.vars, "BAD_USER_INPUT")
					require.Equal(t, tc.field, r.ext("field"), "%s", r.Errors[0].Message)
				})
			}
			// A literal of the wrong enum value fails validation as BAD_USER_INPUT.
			s.requireCode(t, admin, `mutation { createTask(input: {projectId: "x", title: "x", priority: P9}) { task { id } } }`, nil, "BAD_USER_INPUT")
			// Nothing was created by any of them.
			d := s.query(t, admin, `query($p: ID!) { tasks(projectId: $p) { totalCount } }`, M{"p": project})
			require.Equal(t, 1, d.N("tasks.totalCount"))
		})

		t.Run("malformed request", func(t *testing.T) {
			secret := "SECRET-PAYLOAD-123"
			req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader([]byte(`{"query": "`+secret)))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+admin)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.NotContains(t, string(raw), secret)
			var out gqlResponse
			require.NoError(t, json.Unmarshal(raw, &out))
			require.NotEmpty(t, out.Errors)
			require.Equal(t, "BAD_USER_INPUT", out.code())
			// Requests gqlgen's transports refuse themselves carry a code too.
			for _, tc := range []struct {
				name, method, path, contentType, body string
				status                                int
			}{
				{"unsupported content type", http.MethodPost, "/graphql", "text/plain", `{"query": "{ viewer { id } }"}`, http.StatusBadRequest},
				{"mutation over GET", http.MethodGet, "/graphql?query=" + url.QueryEscape(`mutation { createProject(input: {name: "g", slug: "g"}) { project { id } } }`), "", "", http.StatusNotAcceptable},
				{"GET variables not JSON", http.MethodGet, "/graphql?query=" + url.QueryEscape(`{ viewer { id } }`) + "&variables=%7B", "", "", http.StatusBadRequest},
			} {
				req, err := http.NewRequest(tc.method, s.URL+tc.path, strings.NewReader(tc.body))
				require.NoError(t, err)
				if tc.contentType != "" {
					req.Header.Set("Content-Type", tc.contentType)
				}
				req.Header.Set("Authorization", "Bearer "+admin)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				var out gqlResponse
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&out), tc.name)
				resp.Body.Close()
				require.Equal(t, tc.status, resp.StatusCode, tc.name)
				require.NotEmpty(t, out.Errors, tc.name)
				require.Equal(t, "BAD_USER_INPUT", out.code(), tc.name)
			}
			// GET carries queries.
			req, err = http.NewRequest(http.MethodGet, s.URL+"/graphql?query="+url.QueryEscape(`{ viewer { slug } }`), nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+admin)
			resp, err = http.DefaultClient.Do(req)
			require.NoError(t, err)
			raw, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.JSONEq(t, `{"data": {"viewer": {"slug": "admin"}}}`, string(raw))
			// Unknown fields are validation errors, not internal ones.
			r := s.do(t, admin, `{ viewer { noSuchField } }`, nil)
			require.Equal(t, "GRAPHQL_VALIDATION_FAILED", r.code())
		})
	})
}
