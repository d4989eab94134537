#!/usr/bin/env bash
# The client side of one conformance scenario: the suite runs this with
# the server's URL as the last argument and the scenario's name in
# MCP_CONFORMANCE_SCENARIO; it does what a bench user would do against
# that server. BENCH is the bench executable.
set -uo pipefail
url="${!#}"
bench="${BENCH:?BENCH must name the bench executable}"
case "${MCP_CONFORMANCE_SCENARIO:-}" in
initialize)
  exec "$bench" mcp inspect --url "$url" --timeout 20s ;;
tools_call)
  exec "$bench" mcp call --url "$url" --default-class read --timeout 20s add_numbers '{"a":5,"b":3}' ;;
elicitation-sep1034-client-defaults)
  exec "$bench" mcp call --url "$url" --default-class read --timeout 20s test_client_elicitation_defaults ;;
sse-retry)
  exec "$bench" mcp call --url "$url" --default-class read --timeout 20s test_reconnection ;;
auth/*)
  # The authorization scenarios: connect, list and call, as a run would,
  # authorizing by OAuth. The scenario's context gives
  # a client registered in advance, when it has one; its secret goes
  # through the environment, as a task file would name it.
  ctx="${MCP_CONFORMANCE_CONTEXT:-}"
  field() { [ -n "$ctx" ] && python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2], ""))' "$ctx" "$1"; }
  id=$(field client_id || true) secret=$(field client_secret || true)
  flags=(--oauth)
  case "$MCP_CONFORMANCE_SCENARIO" in
  auth/client-credentials-*) flags+=(--grant client_credentials) ;;
  esac
  [ -n "$id" ] && flags+=(--client-id "$id")
  if [ -n "$secret" ]; then
    export CONFORMANCE_CLIENT_SECRET="$secret"
    flags+=(--client-secret-env CONFORMANCE_CLIENT_SECRET)
  fi
  # Every authorization scenario's server offers test-tool: calling it is
  # what a run does, and what a server asks more scopes for (step-up).
  exec "$bench" mcp call --url "$url" --default-class read --timeout 20s "${flags[@]}" test-tool ;;
*)
  exec "$bench" mcp inspect --url "$url" --timeout 20s ;;
esac
