package main

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// oidcProvider is test/oidc-provider's provider.mjs (node-oidc-provider, a
// real, OpenID Certified provider) running as a child process.
type oidcProvider struct {
	Issuer   string
	ClientID string
}

const testOIDCClient = "taskgraph-dashboard"

// startOIDCProvider starts the provider; it skips the test when the
// provider's node_modules are missing (fails instead under CI=true).
func startOIDCProvider(t testing.TB, redirectURIs ...string) *oidcProvider {
	t.Helper()
	dir, err := filepath.Abs("../../test/oidc-provider")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "oidc-provider")); err != nil {
		msg := "test/oidc-provider/node_modules is missing: run (cd test/oidc-provider && npm ci --no-audit --no-fund)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	require.NoError(t, err, "node is needed for the OpenID provider")
	cmd := exec.Command(node, "provider.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CLIENT_ID="+testOIDCClient, "REDIRECT_URIS="+strings.Join(redirectURIs, ","))
	cmd.Stderr = io.Discard
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		var hello struct{ Issuer string }
		if json.Unmarshal(lines.Bytes(), &hello) == nil && hello.Issuer != "" {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return &oidcProvider{Issuer: hello.Issuer, ClientID: testOIDCClient}
		}
	}
	t.Fatalf("the OpenID provider exited before saying its issuer: %v", lines.Err())
	return nil
}

// hook calls one of provider.mjs's test hooks.
func (p *oidcProvider) hook(t testing.TB, path string) {
	t.Helper()
	resp, err := http.Post(p.Issuer+path, "text/plain", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode, path)
}

func (p *oidcProvider) rotateKeys(t testing.TB) { p.hook(t, "/__rotate") }
func (p *oidcProvider) setTTL(t testing.TB, sec int) {
	p.hook(t, fmt.Sprintf("/__ttl?seconds=%d", sec))
}
func (p *oidcProvider) setRedirects(t testing.TB, uris ...string) {
	p.hook(t, "/__redirect_uris?uris="+url.QueryEscape(strings.Join(uris, ",")))
}

var formAction = regexp.MustCompile(`<form[^>]*action="([^"]+)"`)
var formPrompt = regexp.MustCompile(`name="prompt" value="([a-z]+)"`)

// signIn runs the authorization code flow with PKCE as a browser would,
// through the provider's login and consent pages, and returns the ID token.
func (p *oidcProvider) signIn(t testing.TB, login string) string {
	t.Helper()
	const redirect = "http://127.0.0.1/callback"
	verifier := make([]byte, 32)
	_, _ = rand.Read(verifier)
	codeVerifier := base64.RawURLEncoding.EncodeToString(verifier)
	sum := sha256.Sum256([]byte(codeVerifier))
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	var code string
	browser := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirect) {
			code = req.URL.Query().Get("code")
			return http.ErrUseLastResponse
		}
		return nil
	}}
	q := url.Values{"client_id": {p.ClientID}, "response_type": {"code"}, "scope": {"openid profile email taskgraph"},
		"redirect_uri": {redirect}, "state": {"s"}, "nonce": {"n"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
	resp, err := browser.Get(p.Issuer + "/auth?" + q.Encode())
	require.NoError(t, err)
	for step := 0; code == "" && step < 4; step++ {
		page, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		action, prompt := formAction.FindSubmatch(page), formPrompt.FindSubmatch(page)
		require.True(t, action != nil && prompt != nil, "an interaction page (HTTP %d): %s", resp.StatusCode, page)
		target, err := resp.Request.URL.Parse(string(action[1]))
		require.NoError(t, err)
		resp, err = browser.PostForm(target.String(), url.Values{"prompt": {string(prompt[1])}, "login": {login}, "password": {"any"}})
		require.NoError(t, err)
	}
	resp.Body.Close()
	require.NotEmpty(t, code, "the provider redirected back with a code")

	tok, err := http.PostForm(p.Issuer+"/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {redirect}, "client_id": {p.ClientID}, "code_verifier": {codeVerifier}})
	require.NoError(t, err)
	defer tok.Body.Close()
	var out struct {
		IDToken string `json:"id_token"`
		Error   string `json:"error_description"`
	}
	require.NoError(t, json.NewDecoder(tok.Body).Decode(&out))
	require.NotEmpty(t, out.IDToken, "token endpoint: %s", out.Error)
	return out.IDToken
}

// jwtClaims decodes a JWT's payload (no verification: the server does that).
func jwtClaims(t testing.TB, token string) map[string]any { return jwtPart(t, token, 1) }

// jwtKid is the id of the key that signed a JWT (its header's kid).
func jwtKid(t testing.TB, token string) string {
	kid, _ := jwtPart(t, token, 0)["kid"].(string)
	return kid
}

func jwtPart(t testing.TB, token string, i int) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	require.Len(t, parts, 3)
	raw, err := base64.RawURLEncoding.DecodeString(parts[i])
	require.NoError(t, err)
	var claims map[string]any
	require.NoError(t, json.Unmarshal(raw, &claims))
	return claims
}
