package server

import (
	"encoding/json"
	"net/http"
)

// SSOInfo is what the dashboard needs to offer "Sign in with …" with an
// OpenID Connect provider: the issuer (its discovery document gives the
// authorization and token endpoints) and the public client id. The
// dashboard runs the authorization code flow with PKCE itself; no secret
// reaches the browser.
type SSOInfo struct {
	Issuer   string `json:"issuer"`
	ClientID string `json:"clientId"`
}

// ssoConfig answers GET /ui/sso.json: the SSOInfo, or {"enabled": false}.
func ssoConfig(info *SSOInfo) http.Handler {
	body := []byte(`{"enabled":false}`)
	if info != nil {
		b, err := json.Marshal(struct {
			Enabled bool `json:"enabled"`
			SSOInfo
		}{true, *info})
		if err != nil {
			panic("server: SSOInfo does not marshal: " + err.Error())
		}
		body = b
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(body)
	})
}
