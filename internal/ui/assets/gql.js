// The dashboard's only way to the server: GraphQL over POST /graphql and
// subscriptions over the graphql-transport-ws protocol on GET /graphql.

const TOKEN_KEY = 'taskgraph.token';
const QUERY_TIMEOUT_MS = 20000;

export function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }
export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t); else sessionStorage.removeItem(TOKEN_KEY);
}

// GraphQLError carries the server's errors (message, extensions.code, field).
export class GraphQLError extends Error {
  constructor(errors, status) {
    super(errors.map((e) => e.message).join('; '));
    this.errors = errors;
    this.status = status;
    this.code = errors[0] && errors[0].extensions && errors[0].extensions.code;
  }
}

const documents = new Map();

// doc loads one of the page's GraphQL documents (queries/<name>.graphql),
// the same files the server's tests measure. A load that failed (the server
// away) is forgotten, so that the next read asks again.
export async function doc(name) {
  if (!documents.has(name)) {
    const loading = fetch(`/ui/queries/${name}.graphql`).then((r) => {
      if (!r.ok) throw new Error(`query ${name}: HTTP ${r.status}`);
      return r.text();
    });
    documents.set(name, loading);
    loading.catch(() => { if (documents.get(name) === loading) documents.delete(name); });
  }
  return documents.get(name);
}

// query runs a query or mutation document by name and returns its data.
export async function query(name, variables = {}, operationName) {
  const text = await doc(name);
  // A request that hangs (a server going away mid-answer) fails after a
  // while instead of holding up the page's next reads.
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), QUERY_TIMEOUT_MS);
  let res;
  let body;
  try {
    res = await fetch('/graphql', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token()}` },
      body: JSON.stringify({ query: text, variables, operationName }),
      signal: abort.signal,
    });
    try { body = await res.json(); } catch { throw new GraphQLError([{ message: `HTTP ${res.status}` }], res.status); }
  } finally {
    clearTimeout(timer);
  }
  if (body.errors && body.errors.length) throw new GraphQLError(body.errors, res.status);
  return body.data;
}

// subscribe runs a subscription document over graphql-transport-ws and keeps
// it running across dropped connections: every reconnect resubscribes with
// `after` set to the cursor of the last event received (variables(cursor)
// builds the variables), so nothing is skipped or repeated.
//
// handlers: onEvent(data) for each event, onState(state, detail) with state
// 'connecting' | 'live' | 'reconnecting' | 'closed' | 'unauthorized', and
// cursorOf(data) to pick the cursor out of an event.
export function subscribe(name, variables, cursor, handlers) {
  let ws = null;
  let stopped = false;
  let attempt = 0;
  let timer = null;
  let last = cursor;
  let subId = 0;
  const state = (s, detail) => handlers.onState && handlers.onState(s, detail);

  async function connect() {
    if (stopped) return;
    const text = await doc(name);
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    state(attempt === 0 ? 'connecting' : 'reconnecting', { attempt });
    ws = new WebSocket(`${proto}//${location.host}/graphql`, 'graphql-transport-ws');
    const sock = ws;
    let acked = false;
    sock.onopen = () => {
      sock.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${token()}` } }));
    };
    const start = () => {
      subId += 1;
      sock.send(JSON.stringify({ id: String(subId), type: 'subscribe', payload: { query: text, variables: variables(last) } }));
    };
    sock.onmessage = (m) => {
      let msg;
      try { msg = JSON.parse(m.data); } catch { return; }
      switch (msg.type) {
        case 'connection_ack':
          acked = true;
          state('live', { resumed: attempt > 0, cursor: last });
          attempt = 0;
          start();
          break;
        case 'ping':
          sock.send(JSON.stringify({ type: 'pong' }));
          break;
        case 'next':
          if (msg.id !== String(subId)) return;
          if (msg.payload.errors && msg.payload.errors.length) {
            handlers.onError && handlers.onError(new GraphQLError(msg.payload.errors));
          }
          if (msg.payload.data) {
            const c = handlers.cursorOf(msg.payload.data);
            if (c) last = c;
            handlers.onEvent(msg.payload.data);
          }
          break;
        case 'error': {
          // A subscriber that fell behind is ended with LIMIT_EXCEEDED and the
          // cursor to resubscribe from; other errors are shown and end it.
          const errs = Array.isArray(msg.payload) ? msg.payload : [msg.payload];
          const ext = errs[0] && errs[0].extensions;
          if (ext && ext.cursor) { last = ext.cursor; start(); return; }
          handlers.onError && handlers.onError(new GraphQLError(errs));
          break;
        }
        case 'complete':
          state('closed', {});
          break;
        default:
      }
    };
    sock.onclose = (ev) => {
      if (sock !== ws) return;
      if (stopped) return;
      if (ev.code === 4403 || ev.code === 4401) { state('unauthorized', { code: ev.code }); return; }
      attempt += 1;
      const delay = Math.min(5000, 250 * 2 ** Math.min(attempt, 5)) * (0.75 + Math.random() / 2);
      state('reconnecting', { attempt, delay, acked, code: ev.code });
      timer = setTimeout(connect, delay);
    };
  }
  connect();
  return {
    close() {
      stopped = true;
      clearTimeout(timer);
      if (ws) ws.close(1000, 'page closed');
    },
    get cursor() { return last; },
  };
}
