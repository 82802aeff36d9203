// Runs graphql-http's GraphQL-over-HTTP server audits against Taskgraph
// (cmd/taskgraph/e2e_graphqlhttp_test.go runs it). Environment: URL (the
// /graphql endpoint), TOKEN (optional: sent as a bearer token on every
// request). Prints one JSON line per audit: {id, name, status, reason} and,
// for a failed one, the HTTP status and WWW-Authenticate header it got.
import { auditServer } from 'graphql-http';

const { URL: url, TOKEN } = process.env;
const fetchFn = (input, init = {}) => {
  if (!TOKEN) return fetch(input, init);
  const headers = new Headers(init.headers || (input instanceof Request ? input.headers : undefined));
  headers.set('Authorization', `Bearer ${TOKEN}`);
  return fetch(input, { ...init, headers });
};
const results = await auditServer({ url, fetchFn });
for (const r of results) {
  const res = r.response;
  const line = { id: r.id, name: r.name, status: r.status, reason: r.reason };
  if (res) Object.assign(line, { httpStatus: String(res.status), authenticate: res.headers.get('www-authenticate') || '' });
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
