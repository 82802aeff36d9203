// Starts GraphiQL against this server's /graphql: queries and mutations over
// HTTP, subscriptions over a graphql-transport-ws websocket on the same path.
// Every operation needs a token: the Headers tab starts with the
// Authorization header to fill in; its headers are also the websocket's
// connection_init payload. When the token changes, the schema is fetched
// again, so the docs and autocomplete follow without a manual re-fetch.
(function () {
  var defaultQuery = [
    '# Set your token in the Headers tab below the editor:',
    '#   { "Authorization": "Bearer tg_…" }',
    '# then run this query (Ctrl-Enter).',
    '{',
    '  viewer { slug name }',
    '  projects(first: 10) { totalCount nodes { slug name } }',
    '}',
    ''
  ].join('\n');
  var wsScheme = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
  var baseFetcher = GraphiQL.createFetcher({
    url: window.location.origin + '/graphql',
    subscriptionUrl: wsScheme + '//' + window.location.host + '/graphql'
  });
  // GraphiQL's fetcher sends an operation over the websocket only when the
  // parsed document it is handed says subscription, and GraphiQL hands it the
  // editor's last parsed document, which can lag behind the text: parse the
  // text being sent (with the graphql-js GraphiQL bundles) so subscriptions
  // always take the websocket.
  function fetcher(params, opts) {
    opts = opts || {};
    if (params && typeof params.query === 'string') {
      try {
        opts = Object.assign({}, opts, { documentAST: GraphiQL.GraphQL.parse(params.query) });
      } catch (e) {
        // not parseable: the server answers with the syntax error
      }
    }
    return baseFetcher(params, opts);
  }

  // authorizationOf is the Authorization header of the headers editor's
  // text, or '' while it is not valid JSON.
  function authorizationOf(text) {
    try {
      var h = JSON.parse(text || '{}');
      return (h && typeof h.Authorization === 'string') ? h.Authorization.trim() : '';
    } catch (e) {
      return '';
    }
  }
  var lastAuth = null;
  var refetchTimer = null;
  function onEditHeaders(text) {
    var auth = authorizationOf(text);
    if (auth === lastAuth || !/^Bearer \S{8,}$/.test(auth)) {
      return;
    }
    lastAuth = auth;
    clearTimeout(refetchTimer);
    refetchTimer = setTimeout(function () {
      var button = document.querySelector('button[aria-label="Re-fetch GraphQL schema"]');
      if (button) {
        button.click();
      }
    }, 400);
  }

  ReactDOM.createRoot(document.getElementById('graphiql')).render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      defaultQuery: defaultQuery,
      defaultHeaders: '{\n  "Authorization": "Bearer "\n}',
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: true,
      defaultEditorToolsVisibility: 'headers',
      onEditHeaders: onEditHeaders
    })
  );
})();
