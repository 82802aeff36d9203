package main

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAuth covers users, tokens and authentication: createUser,
// createApiToken (the secret works and is shown once), revokeApiToken, and
// UNAUTHENTICATED for no, bad and revoked tokens.
func TestAuth(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, s *testServer) {
		t.Run("unauthenticated", func(t *testing.T) {
			for name, tok := range map[string]string{"no token": "", "bad token": "tg_not-a-real-token", "admin token with junk": s.AdminToken + "x"} {
				t.Run(name, func(t *testing.T) {
					r := s.requireCode(t, tok, `{ viewer { id } }`, nil, "UNAUTHENTICATED")
					require.True(t, r.dataIsNull(), "no data for an unauthenticated request: %s", r.Data)
					s.requireCode(t, tok, `mutation { createProject(input: {name: "x", slug: "x"}) { project { id } } }`, nil, "UNAUTHENTICATED")
				})
			}
			// Anonymous clients learn nothing about the schema: even an invalid query is UNAUTHENTICATED.
			s.requireCode(t, "", `{ noSuchField }`, nil, "UNAUTHENTICATED")
			// A malformed Authorization header is no token either.
			req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader([]byte(`{"query":"{ viewer { id } }"}`)))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Basic "+s.AdminToken)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			var body gqlResponse
			require.NoError(t, decodeJSON(resp.Body, &body))
			require.Equal(t, "UNAUTHENTICATED", body.code())
		})

		t.Run("createUser", func(t *testing.T) {
			d := s.query(t, s.AdminToken, `mutation { createUser(input: {name: "Ada Lovelace", email: "ada@example.com", slug: "ada",
				telegramChatId: "42", settings: {theme: "dark"}}) {
				user { id slug name email telegramChatId settings createdAt updatedAt } } }`, nil)
			u := d.at("createUser.user")
			require.Equal(t, "ada", u.S("slug"))
			require.Equal(t, "Ada Lovelace", u.S("name"))
			require.Equal(t, "ada@example.com", u.S("email"))
			require.Equal(t, "42", u.S("telegramChatId"))
			require.Equal(t, "dark", u.S("settings.theme"))
			require.NotEmpty(t, u.S("id"))
			require.NotEmpty(t, u.S("createdAt"))

			r := s.requireCode(t, s.AdminToken, `mutation { createUser(input: {name: "Other", email: "o@example.com", slug: "ada"}) { user { id } } }`, nil, "CONFLICT")
			require.Equal(t, "slug", r.ext("field"))
			r = s.requireCode(t, s.AdminToken, `mutation { createUser(input: {name: "Bad", email: "b@example.com", slug: "Not A Slug"}) { user { id } } }`, nil, "BAD_USER_INPUT")
			require.Equal(t, "slug", r.ext("field"))
			r = s.requireCode(t, s.AdminToken, `mutation { createUser(input: {name: "  ", email: "b@example.com", slug: "blank"}) { user { id } } }`, nil, "BAD_USER_INPUT")
			require.Equal(t, "name", r.ext("field"))
			r = s.requireCode(t, s.AdminToken, `mutation { createUser(input: {name: "Bad", email: "not-an-email", slug: "bad-email"}) { user { id } } }`, nil, "BAD_USER_INPUT")
			require.Equal(t, "email", r.ext("field"))
		})

		t.Run("member and agent cannot create users", func(t *testing.T) {
			_, member := s.member(t, "cu-member")
			s.requireCode(t, member, `mutation { createUser(input: {name: "x", email: "x@example.com", slug: "cu-x"}) { user { id } } }`, nil, "FORBIDDEN")
			project := s.createProject(t, s.AdminToken, "cu-project")
			_, agent := s.userWithToken(t, "cu-agent", "AGENT", project)
			s.requireCode(t, agent, `mutation { createUser(input: {name: "x", email: "x@example.com", slug: "cu-y"}) { user { id } } }`, nil, "FORBIDDEN")
		})

		t.Run("createApiToken and revokeApiToken", func(t *testing.T) {
			userID, _ := s.member(t, "tok-user")
			d := s.query(t, s.AdminToken, `mutation($u: ID!) { createApiToken(input: {userId: $u, name: "laptop", role: MEMBER}) {
				token apiToken { id name role user { id slug } project { id } createdAt lastUsedAt revokedAt } } }`, M{"u": userID})
			secret := d.S("createApiToken.token")
			tokID := d.S("createApiToken.apiToken.id")
			require.NotEmpty(t, secret)
			require.Equal(t, "laptop", d.S("createApiToken.apiToken.name"))
			require.Equal(t, "MEMBER", d.S("createApiToken.apiToken.role"))
			require.Equal(t, userID, d.S("createApiToken.apiToken.user.id"))
			require.True(t, d.Null("createApiToken.apiToken.project"))
			require.True(t, d.Null("createApiToken.apiToken.lastUsedAt"))
			require.True(t, d.Null("createApiToken.apiToken.revokedAt"))

			// The secret works.
			v := s.query(t, secret, `{ viewer { id slug } }`, nil)
			require.Equal(t, userID, v.S("viewer.id"))
			require.Equal(t, "tok-user", v.S("viewer.slug"))

			// Shown once: no field of ApiToken holds the secret, and the
			// listing shows the token without it.
			r := s.do(t, s.AdminToken, `query($id: ID!) { node(id: $id) { ... on ApiToken { token } } }`, M{"id": tokID})
			require.NotEmpty(t, r.Errors)
			require.Equal(t, "GRAPHQL_VALIDATION_FAILED", r.code())
			r = s.do(t, s.AdminToken, `query($id: ID!) { node(id: $id) { ... on ApiToken { tokenHash } } }`, M{"id": tokID})
			require.Equal(t, "GRAPHQL_VALIDATION_FAILED", r.code())
			l := s.query(t, secret, `{ viewer { apiTokens { id name role lastUsedAt } } }`, nil)
			require.Contains(t, l.Col("viewer.apiTokens", "id"), tokID)
			for _, tk := range l.L("viewer.apiTokens") {
				if tk.S("id") == tokID {
					require.False(t, tk.Null("lastUsedAt"), "a used token records lastUsedAt")
				}
			}
			require.NotContains(t, string(mustJSON(t, l.v)), secret)

			// A member creates a token for themselves; not for others, never ADMIN.
			otherID, _ := s.member(t, "tok-other")
			d = s.query(t, secret, `mutation($u: ID!) { createApiToken(input: {userId: $u, name: "second", role: MEMBER}) { token apiToken { id } } }`, M{"u": userID})
			second := d.S("createApiToken.token")
			require.NotEqual(t, secret, second)
			s.requireCode(t, secret, `mutation($u: ID!) { createApiToken(input: {userId: $u, name: "x", role: MEMBER}) { token } }`, M{"u": otherID}, "FORBIDDEN")
			s.requireCode(t, secret, `mutation($u: ID!) { createApiToken(input: {userId: $u, name: "x", role: ADMIN}) { token } }`, M{"u": userID}, "FORBIDDEN")
			// AGENT needs a project; others must not have one.
			r = s.requireCode(t, s.AdminToken, `mutation($u: ID!) { createApiToken(input: {userId: $u, name: "x", role: AGENT}) { token } }`, M{"u": userID}, "BAD_USER_INPUT")
			require.Equal(t, "projectId", r.ext("field"))
			p := s.createProject(t, s.AdminToken, "tok-project")
			r = s.requireCode(t, s.AdminToken, `mutation($u: ID!, $p: ID!) { createApiToken(input: {userId: $u, name: "x", role: MEMBER, projectId: $p}) { token } }`,
				M{"u": userID, "p": p}, "BAD_USER_INPUT")
			require.Equal(t, "projectId", r.ext("field"))

			// Revoking: the token stops working at once; the other keeps working.
			d = s.query(t, secret, `mutation($id: ID!) { revokeApiToken(input: {id: $id}) { apiToken { id revokedAt } } }`, M{"id": tokID})
			require.Equal(t, tokID, d.S("revokeApiToken.apiToken.id"))
			require.False(t, d.Null("revokeApiToken.apiToken.revokedAt"))
			s.requireCode(t, secret, `{ viewer { id } }`, nil, "UNAUTHENTICATED")
			require.Equal(t, userID, s.query(t, second, `{ viewer { id } }`, nil).S("viewer.id"))
			// Revoking again is harmless and keeps the first revocation time.
			d2 := s.query(t, s.AdminToken, `mutation($id: ID!) { revokeApiToken(input: {id: $id}) { apiToken { revokedAt } } }`, M{"id": tokID})
			require.Equal(t, d.S("revokeApiToken.apiToken.revokedAt"), d2.S("revokeApiToken.apiToken.revokedAt"))

			// A member cannot revoke another user's token (NOT_FOUND: never leak it).
			_, otherTok := s.member(t, "tok-third")
			secondID := s.query(t, second, `{ viewer { apiTokens { id revokedAt } } }`, nil)
			var liveID string
			for _, tk := range secondID.L("viewer.apiTokens") {
				if tk.Null("revokedAt") {
					liveID = tk.S("id")
				}
			}
			require.NotEmpty(t, liveID)
			s.requireCode(t, otherTok, `mutation($id: ID!) { revokeApiToken(input: {id: $id}) { apiToken { id } } }`, M{"id": liveID}, "NOT_FOUND")
			// ...nor see it.
			require.Empty(t, s.query(t, otherTok, `query($id: ID!) { node(id: $id) { id } }`, M{"id": liveID}).v.(map[string]any)["node"])
			o := s.query(t, otherTok, `query($id: ID!) { node(id: $id) { ... on User { apiTokens { id } } } }`, M{"id": userID})
			require.Empty(t, o.L("node.apiTokens"), "a member does not see another user's tokens")
			// The admin does.
			a := s.query(t, s.AdminToken, `query($id: ID!) { node(id: $id) { ... on User { apiTokens { id } } } }`, M{"id": userID})
			require.Len(t, a.L("node.apiTokens"), 3) // the first token, "laptop" and "second"
		})

		t.Run("bootstrap admin token", func(t *testing.T) {
			d := s.query(t, s.AdminToken, `{ viewer { slug apiTokens { role name } } }`, nil)
			require.Equal(t, "admin", d.S("viewer.slug"))
			require.Contains(t, d.Col("viewer.apiTokens", "role"), "ADMIN")
		})
	})
}
