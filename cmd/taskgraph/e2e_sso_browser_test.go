package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskgraph/taskgraph/internal/testdb"
)

// TestDashboardSingleSignOn: in Chromium, a person opens the dashboard of a
// server with --oidc-client-id, presses "Sign in with …", signs in on the
// real OpenID provider's login page (test/oidc-provider), comes back signed
// in (authorization code + PKCE, no client secret) and sees their projects —
// and not another user's (test/dashboard/sso.test.mjs).
func TestDashboardSingleSignOn(t *testing.T) {
	t.Parallel()
	node, chromium := dashboardBrowser(t)
	p := startOIDCProvider(t)
	testdb.Run(t, func(t *testing.T, dbURL string) {
		s := startServer(t, dbURL, "--oidc-issuer", p.Issuer, "--oidc-client-id", p.ClientID)
		p.setRedirects(t, "http://127.0.0.1/callback", s.URL+"/ui/")
		db := strings.SplitN(dbURL, ":", 2)[0]

		// The user's project, made with a JWT of theirs before the browser
		// signs in (the first use creates the user), and someone else's.
		login := "grace." + db
		mine := "grace-" + db
		s.createProject(t, p.signIn(t, login), mine)
		_, other := s.member(t, "other-"+db)
		hidden := "other-" + db
		s.createProject(t, other, hidden)

		out, err := filepath.Abs(filepath.Join(dashboardTestDir, "output", strings.ReplaceAll(t.Name(), "/", "_")))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "sso.test.mjs")
		cmd.Dir = dashboardTestDir
		cmd.Env = append(os.Environ(), "BASE_URL="+s.URL, "LOGIN="+login, "PROJECT="+mine, "HIDDEN="+hidden,
			"CHROMIUM="+chromium, "OUT_DIR="+out)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		for _, l := range lines {
			t.Log("browser:", l)
		}
		if err != nil || lines[len(lines)-1] != "DONE" {
			t.Fatalf("browser test failed: %v\n%s", err, stderr.String())
		}
	})
}
