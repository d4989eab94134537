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
*)
  # The authorization scenarios (auth/...): connect and list, as a run
  # would before its first attempt.
  exec "$bench" mcp inspect --url "$url" --timeout 20s ;;
esac
