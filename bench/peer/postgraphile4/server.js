// PostGraphile 4 on Taskgraph's tables, for make bench-peer (see ../README.md).
// Usage: node server.js <listen port> <database URL>
'use strict';
const http = require('http');
const { postgraphile } = require('postgraphile');

const [port, databaseURL] = process.argv.slice(2);
if (!port || !databaseURL) {
  console.error('usage: node server.js <port> <database URL>');
  process.exit(2);
}

// The production options of PostGraphile's documentation ("Recommended
// options" without the development ones): no query log, no GraphiQL, no
// schema watching, no extended errors.
const middleware = postgraphile(databaseURL, 'public', {
  disableQueryLog: true,
  graphiql: false,
  watchPg: false,
  retryOnInitFail: false,
  dynamicJson: true,
  setofFunctionsContainNulls: false,
  ignoreRBAC: false,
  legacyRelations: 'omit',
  enableQueryBatching: false,
});

const server = http.createServer(middleware);
server.listen(Number(port), '127.0.0.1', () => {
  console.log(`postgraphile 4 listening on 127.0.0.1:${port}`);
});
