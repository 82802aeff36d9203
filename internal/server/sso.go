package server

import (
	"encoding/json"
	"net/http"
	"net/url"
)

// SSOInfo is what the dashboard needs to offer "Sign in with …" with an
// OpenID Connect provider: the issuer (its discovery document gives the
// authorization and token endpoints) and the public client id. The
// dashboard runs the authorization code flow with PKCE itself; no secret
// reaches the browser.
type SSOInfo struct {
	Issuer   string `json:"issuer"`
	ClientID string `json:"clientId"`
	// The endpoints of the issuer's discovery document: the dashboard sends
	// its users to the first and trades their code for tokens at the second
	// (which its Content-Security-Policy allows it to reach).
	AuthorizationEndpoint string `json:"authorizationEndpoint"`
	TokenEndpoint         string `json:"tokenEndpoint"`
}

// connectOrigins are the origins besides its own the dashboard must reach:
// the token endpoint's.
func (i *SSOInfo) connectOrigins() []string {
	if i == nil || i.TokenEndpoint == "" {
		return nil
	}
	u, err := url.Parse(i.TokenEndpoint)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil
	}
	return []string{u.Scheme + "://" + u.Host}
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
