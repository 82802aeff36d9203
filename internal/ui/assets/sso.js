// "Sign in with …": OpenID Connect's authorization code flow with PKCE, as
// a public client — no secret in the browser. The server says whether it is
// offered (GET /ui/sso.json: the issuer, the dashboard's client id and the
// provider's endpoints). The user signs in on the provider's own page, which
// sends the browser back to /ui/ with a code; the page trades it, with the
// verifier only it holds, for an ID token at the token endpoint, and uses
// that token as its bearer credential until it expires.

const FLOW_KEY = 'taskgraph.sso';

let config = null;

// ssoConfig returns the server's single sign-on settings, or null when it
// offers none.
export async function ssoConfig() {
  if (config === null) {
    config = fetch('/ui/sso.json').then((r) => (r.ok ? r.json() : { enabled: false }))
      .then((c) => (c.enabled && c.clientId && c.authorizationEndpoint && c.tokenEndpoint ? c : false))
      .catch(() => false);
  }
  return (await config) || null;
}

// providerName is how the sign-in button names the provider: its host.
export function providerName(c) {
  try { return new URL(c.issuer).host; } catch { return 'your identity provider'; }
}

function base64url(bytes) {
  let s = '';
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function random(n) { return base64url(crypto.getRandomValues(new Uint8Array(n))); }

function redirectURI() { return `${location.origin}/ui/`; }

// startSignIn sends the browser to the provider's sign-in page. What the
// return needs (state, nonce, PKCE verifier, the page to go back to) stays
// in this tab's sessionStorage.
export async function startSignIn(c) {
  const verifier = random(32);
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const flow = { state: random(16), nonce: random(16), verifier, hash: location.hash || '#/' };
  sessionStorage.setItem(FLOW_KEY, JSON.stringify(flow));
  const u = new URL(c.authorizationEndpoint);
  u.search = new URLSearchParams({
    client_id: c.clientId, response_type: 'code', scope: 'openid profile email',
    redirect_uri: redirectURI(), state: flow.state, nonce: flow.nonce,
    code_challenge: challenge, code_challenge_method: 'S256',
  }).toString();
  location.assign(u.toString());
}

// finishSignIn completes a sign-in the provider has just sent the browser
// back from (a code or an error in the query string). It returns null when
// the page was not opened by such a return, else { token, hash } or
// { error }. The code is taken off the address bar either way.
export async function finishSignIn() {
  const q = new URLSearchParams(location.search);
  if (!q.has('code') && !q.has('error')) return null;
  const flow = JSON.parse(sessionStorage.getItem(FLOW_KEY) || 'null');
  sessionStorage.removeItem(FLOW_KEY);
  history.replaceState(null, '', `/ui/${(flow && flow.hash) || ''}`);
  if (!flow || q.get('state') !== flow.state) return { error: 'The sign-in could not be matched to this tab; try again.' };
  if (q.has('error')) return { error: `Sign-in refused: ${q.get('error_description') || q.get('error')}` };
  const c = await ssoConfig();
  if (!c) return { error: 'Single sign-on is not configured on this server.' };
  let body;
  try {
    const res = await fetch(c.tokenEndpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code', code: q.get('code'), redirect_uri: redirectURI(),
        client_id: c.clientId, code_verifier: flow.verifier,
      }),
    });
    body = await res.json();
  } catch (err) {
    return { error: `The identity provider could not be reached: ${err.message}` };
  }
  if (!body.id_token) return { error: `Sign-in failed: ${body.error_description || body.error || 'no ID token'}` };
  let claims;
  try {
    claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(
      atob(body.id_token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')), (ch) => ch.charCodeAt(0))));
  } catch {
    return { error: 'Sign-in failed: the ID token is not a JWT.' };
  }
  // The server verifies the token's signature, issuer, audience and expiry;
  // the nonce ties it to this tab's request.
  if (claims.nonce !== flow.nonce) return { error: 'Sign-in failed: the ID token does not answer this request.' };
  return { token: body.id_token, hash: flow.hash };
}
