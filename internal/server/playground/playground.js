// Starts GraphiQL against this server's /graphql. Every operation needs a token:
// the headers tab starts with the Authorization header to fill in.
(function () {
  var defaultQuery = [
    '# Set your token in the HEADERS tab below:',
    '#   { "Authorization": "Bearer tg_…" }',
    '# then run this query (Ctrl-Enter).',
    '{',
    '  viewer { slug name }',
    '  projects(first: 10) { totalCount nodes { slug name } }',
    '}',
    ''
  ].join('\n');
  var fetcher = GraphiQL.createFetcher({ url: window.location.origin + '/graphql' });
  ReactDOM.createRoot(document.getElementById('graphiql')).render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      defaultQuery: defaultQuery,
      defaultHeaders: '{\n  "Authorization": "Bearer "\n}',
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: true,
      defaultEditorToolsVisibility: 'headers'
    })
  );
})();
