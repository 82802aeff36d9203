package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/server"
	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestSingleSignOn signs users in with a real OpenID provider
// (test/oidc-provider) and uses their ID tokens as bearer tokens: users are
// created on first use by (issuer, sub) with a slug from preferred_username
// and the role claim's role; queries and subscriptions run with the JWT;
// after the provider rotates its keys, tokens signed with the new key are
// accepted (the key set is refetched); an expired JWT is UNAUTHENTICATED
// and a websocket opened with it is closed 4403 at its exp; a server
// expecting another audience refuses the tokens.
func TestSingleSignOn(t *testing.T) {
	t.Parallel()
	p := startOIDCProvider(t)
	testdb.Run(t, func(t *testing.T, url string) {
		s := startServer(t, url, "--oidc-issuer", p.Issuer, "--oidc-client-id", p.ClientID,
			"--oidc-role-claim", "taskgraph_role", "--oidc-clock-skew", "0s")

		ada := p.signIn(t, "ada.lovelace")
		v := s.query(t, ada, `{ viewer { id slug name email } }`, nil)
		require.Equal(t, "ada-lovelace", v.S("viewer.slug"))
		require.Equal(t, "ada.lovelace@example.test", v.S("viewer.email"))
		adaID := v.S("viewer.id")
		// A MEMBER: what only admins may do is refused.
		s.requireCode(t, ada, `mutation { createUser(input: {name: "x", slug: "x-by-ada", email: ""}) { user { id } } }`, nil, "FORBIDDEN")
		// The same (issuer, sub) is the same user on the next sign-in.
		again := p.signIn(t, "ada.lovelace")
		require.Equal(t, adaID, s.query(t, again, `{ viewer { id } }`, nil).S("viewer.id"))

		// The role claim makes an ADMIN.
		admin := p.signIn(t, "admin-grace")
		require.Equal(t, "admin-grace", s.query(t, admin, `{ viewer { slug } }`, nil).S("viewer.slug"))
		s.query(t, admin, `mutation { createUser(input: {name: "Made by SSO", slug: "made-by-sso", email: ""}) { user { id } } }`, nil)
		// A slug already taken gets a suffix.
		s.query(t, s.AdminToken, `mutation { createUser(input: {name: "Bob", slug: "bob", email: ""}) { user { id } } }`, nil)
		require.Equal(t, "bob-2", s.query(t, p.signIn(t, "bob"), `{ viewer { slug } }`, nil).S("viewer.slug"))

		// A subscription with the JWT.
		project := s.createProject(t, ada, "sso-"+strings.ToLower(strings.SplitN(url, ":", 2)[0]))
		r := s.mustDialRaw(t)
		r.init(M{"Authorization": "Bearer " + ada})
		after := s.eventCursor(t, ada, project)
		r.send(M{"type": "subscribe", "id": "1", "payload": M{"query": subscribeEvents, "variables": M{"p": project, "after": after}}})
		s.createTask(t, ada, project, "seen over the websocket", nil)
		m, err := r.read()
		require.NoError(t, err)
		require.Equal(t, "next", m["type"], "%v", m)

		// Key rotation: a token signed with the new key is accepted.
		p.rotateKeys(t)
		rotated := p.signIn(t, "ada.lovelace")
		require.NotEqual(t, jwtKid(t, ada), jwtKid(t, rotated))
		require.Equal(t, adaID, s.query(t, rotated, `{ viewer { id } }`, nil).S("viewer.id"))

		// Expiry: HTTP is UNAUTHENTICATED (401) and the websocket closes 4403.
		p.setTTL(t, 3)
		defer p.setTTL(t, 3600)
		short := p.signIn(t, "ada.lovelace")
		exp := time.Unix(int64(jwtClaims(t, short)["exp"].(float64)), 0)
		w := s.mustDialRaw(t)
		w.init(M{"Authorization": "Bearer " + short})
		code, reason := w.closeCode()
		require.Equal(t, server.CloseForbidden, code)
		require.Contains(t, reason, "expired")
		require.False(t, time.Now().Before(exp), "closed at the token's exp, not before")
		r2 := s.do(t, short, `{ viewer { id } }`, nil)
		require.Equal(t, http.StatusUnauthorized, r2.Status)
		require.Equal(t, "UNAUTHENTICATED", r2.code())
	})

	t.Run("audience mismatch", func(t *testing.T) {
		s := startServer(t, testdb.SQLite(t), "--oidc-issuer", p.Issuer, "--oidc-audience", "another-api")
		tok := p.signIn(t, "ada.lovelace")
		r := s.do(t, tok, `{ viewer { id } }`, nil)
		require.Equal(t, http.StatusUnauthorized, r.Status)
		require.Equal(t, "UNAUTHENTICATED", r.code())
	})
}
