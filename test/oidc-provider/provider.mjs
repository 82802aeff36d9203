// A real OpenID Connect provider (node-oidc-provider, OpenID Certified) for
// Taskgraph's single sign-on tests. The Go tests start it as a child process:
//
//   node provider.mjs            (env CLIENT_ID, REDIRECT_URIS, ID_TOKEN_TTL)
//
// It listens on 127.0.0.1 on a free port and prints one JSON line
// {"issuer": "http://127.0.0.1:PORT"} on stdout. Every login is accepted
// (devInteractions: any login name, any password); the login name is the
// account's sub and preferred_username, its email is <login>@example.test,
// and a login starting with "admin" carries taskgraph_role ADMIN (else
// MEMBER). The public client CLIENT_ID (no secret, PKCE) may redirect to
// REDIRECT_URIS (comma-separated).
//
// Test hooks (not part of any OpenID protocol):
//   POST /__rotate                   new signing key; the old one is gone
//   POST /__redirect_uris?uris=a,b   replaces the client's redirect URIs
//   POST /__ttl?seconds=N            lifetime of the tokens issued from now on
import { createServer } from 'node:http';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import Provider from 'oidc-provider';

const clientId = process.env.CLIENT_ID || 'taskgraph-dashboard';
let redirectUris = (process.env.REDIRECT_URIS || 'http://127.0.0.1/callback').split(',').filter(Boolean);
let idTokenTTL = Number(process.env.ID_TOKEN_TTL || 3600);

function newKey() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), use: 'sig', alg: 'RS256' };
}

let key = newKey();
let provider;

function build(issuer) {
  const p = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: redirectUris,
    }],
    jwks: { keys: [key] },
    pkce: { required: () => true },
    conformIdTokenClaims: false,
    scopes: ['openid', 'profile', 'email', 'taskgraph'],
    claims: {
      openid: ['sub'],
      profile: ['preferred_username', 'name'],
      email: ['email', 'email_verified'],
      taskgraph: ['taskgraph_role'],
    },
    ttl: { IdToken: () => idTokenTTL, AccessToken: () => idTokenTTL, Interaction: 600, Session: 3600, Grant: 3600, AuthorizationCode: 60 },
    features: { devInteractions: { enabled: true } },
    async findAccount(ctx, sub) {
      return {
        accountId: sub,
        async claims() {
          return {
            sub,
            preferred_username: sub,
            name: `Test ${sub}`,
            email: `${sub}@example.test`,
            email_verified: true,
            taskgraph_role: sub.startsWith('admin') ? 'ADMIN' : 'MEMBER',
          };
        },
      };
    },
  });
  p.on('server_error', (ctx, err) => console.error('server_error', err));
  return p;
}

const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (req.method === 'POST' && url.pathname === '/__rotate') {
    key = newKey();
    provider = build(provider.issuer);
    res.writeHead(204).end();
    return;
  }
  if (req.method === 'POST' && url.pathname === '/__redirect_uris') {
    redirectUris = (url.searchParams.get('uris') || '').split(',').filter(Boolean);
    provider = build(provider.issuer);
    res.writeHead(204).end();
    return;
  }
  if (req.method === 'POST' && url.pathname === '/__ttl') {
    idTokenTTL = Number(url.searchParams.get('seconds'));
    res.writeHead(204).end();
    return;
  }
  provider.callback()(req, res);
});

server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  provider = build(issuer);
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});

process.on('SIGTERM', () => server.close(() => process.exit(0)));
