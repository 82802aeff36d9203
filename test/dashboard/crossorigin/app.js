// A small front-end served from another origin than Taskgraph's: a query
// and a mutation with fetch, and a subscription with the graphql-ws client,
// as an app built with Apollo, Relay or urql would make them. The address of
// the API, the token and the project come in the location's fragment:
// #api=http://127.0.0.1:8080&token=tg_…&project=<id>. The outcome is left in
// window.result for the browser test (test/dashboard/crossorigin.test.mjs).
const params = new URLSearchParams(location.hash.slice(1));
const api = params.get('api');
const token = params.get('token');
const project = params.get('project');
const log = (line) => { document.getElementById('log').textContent += `${line}\n`; };
const result = { done: false };
window.result = result;

async function graphql(query, variables) {
  const res = await fetch(`${api}/graphql`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

// subscribe resolves with the first event of the subscription, or rejects
// with why the websocket or the operation failed.
function firstEvent(client, query, variables) {
  return new Promise((resolve, reject) => {
    client.subscribe({ query, variables }, {
      next: (m) => (m.errors ? reject(new Error(JSON.stringify(m.errors))) : resolve(m.data)),
      error: (e) => reject(new Error(e instanceof Error ? e.message : `websocket closed: ${e.code} ${e.reason || ''}`.trim())),
      complete: () => reject(new Error('completed without an event')),
    });
  });
}

const subscription = `subscription($p: ID!, $after: String) {
  projectEvents(projectId: $p, after: $after) { type task { title } } }`;

try {
  const d = await graphql(`query($id: ID!) { viewer { slug } project(id: $id) { name eventCursor } }`, { id: project });
  result.viewer = d.viewer.slug;
  result.project = d.project.name;
  log(`query: signed in as ${d.viewer.slug}, project ${d.project.name}`);
  const client = graphqlWs.createClient({
    url: `${api.replace(/^http/, 'ws')}/graphql`,
    connectionParams: { Authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
  // From the project's event cursor: the task created below is seen
  // however soon it commits.
  const event = firstEvent(client, subscription, { p: project, after: d.project.eventCursor });
  await graphql(`mutation($in: CreateTaskInput!) { createTask(input: $in) { task { id } } }`,
    { in: { projectId: project, title: 'made on another origin' } });
  const ev = (await event).projectEvents;
  result.event = `${ev.type} ${ev.task.title}`;
  log(`subscription: ${result.event}`);
  await client.dispose();
} catch (err) {
  result.error = err.message;
  log(`error: ${err.message}`);
  // Refused over HTTP: does the websocket refuse this origin too?
  const client = graphqlWs.createClient({
    url: `${api.replace(/^http/, 'ws')}/graphql`,
    connectionParams: { Authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
  try {
    await firstEvent(client, subscription, { p: project, after: null });
  } catch (wsErr) {
    result.wsError = wsErr.message;
    log(`websocket error: ${wsErr.message}`);
  }
}
result.done = true;
