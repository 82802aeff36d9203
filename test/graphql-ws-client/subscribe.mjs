// Subscribes to a Taskgraph project's events with the reference graphql-ws
// client and prints each event as one JSON line; cmd/taskgraph's
// e2e_graphqlws_test.go runs it against the real server.
//
// Environment: TASKGRAPH_URL (http://127.0.0.1:8080), TASKGRAPH_TOKEN,
// PROJECT_ID, AFTER (a cursor, optional), COUNT (events to read, then exit).
// With MODE=bad-token it expects the connection to be refused and prints
// {"closed": <code>}.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const env = process.env;
const url = env.TASKGRAPH_URL.replace(/^http/, 'ws') + '/graphql';
const token = env.MODE === 'bad-token' ? 'not-a-token' : env.TASKGRAPH_TOKEN;

const client = createClient({
  url,
  webSocketImpl: WebSocket,
  connectionParams: { Authorization: `Bearer ${token}` },
  retryAttempts: 0,
});

const query = `subscription($p: ID!, $after: String) {
  projectEvents(projectId: $p, after: $after) {
    cursor type
    ... on TaskCreated { title status }
    ... on TaskStatusChanged { from to }
  }
}`;

const want = Number(env.COUNT || 1);
let got = 0;

try {
  await new Promise((resolve, reject) => {
    const stop = client.subscribe(
      { query, variables: { p: env.PROJECT_ID, after: env.AFTER || null } },
      {
        next: (result) => {
          if (result.errors) {
            reject(new Error('errors: ' + JSON.stringify(result.errors)));
            return;
          }
          process.stdout.write(JSON.stringify(result.data.projectEvents) + '\n');
          if (++got === want) {
            stop();
            resolve();
          }
        },
        error: (err) => {
          if (err && typeof err.code === 'number') {
            process.stdout.write(JSON.stringify({ closed: err.code, reason: err.reason }) + '\n');
            resolve();
            return;
          }
          reject(err instanceof Error ? err : new Error(JSON.stringify(err)));
        },
        complete: () => resolve(),
      },
    );
  });
} catch (err) {
  process.stderr.write(String(err && err.stack ? err.stack : err) + '\n');
  process.exitCode = 1;
} finally {
  await client.dispose();
}
