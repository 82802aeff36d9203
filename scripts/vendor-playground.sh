#!/usr/bin/env bash
# Refreshes the GraphiQL playground assets embedded in the server
# (internal/server/playground/) from the npm registry.
set -euo pipefail
cd "$(dirname "$0")/.."
GRAPHIQL=4.1.2
REACT=18.2.0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "graphiql@$GRAPHIQL" "react@$REACT" "react-dom@$REACT" >/dev/null)
for pkg in "graphiql-$GRAPHIQL" "react-$REACT" "react-dom-$REACT"; do
  mkdir -p "$tmp/$pkg" && tar xzf "$tmp/$pkg.tgz" -C "$tmp/$pkg" --strip-components=1
done
out=internal/server/playground
cp "$tmp/graphiql-$GRAPHIQL/graphiql.min.js" "$tmp/graphiql-$GRAPHIQL/graphiql.min.css" "$out/"
cp "$tmp/react-$REACT/umd/react.production.min.js" "$tmp/react-dom-$REACT/umd/react-dom.production.min.js" "$out/"
{
  echo "graphiql $GRAPHIQL, react $REACT and react-dom $REACT, from the npm registry (scripts/vendor-playground.sh)."
  for pkg in "graphiql-$GRAPHIQL" "react-$REACT" "react-dom-$REACT"; do
    printf '\n== %s\n' "$pkg"
    cat "$tmp/$pkg"/LICENSE*
  done
} > "$out/LICENSES.txt"
