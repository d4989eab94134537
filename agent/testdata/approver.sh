#!/bin/sh
# A tiny approver for the tests. It reads the call as JSON on stdin, keeps
# it in $APPROVER_LOG when set, and answers on stdout: allow a call whose
# arguments say "please", refuse the others with a reason. Some words in the
# arguments make it misbehave, to test how bench copes.
req=$(cat)
if [ -n "$APPROVER_LOG" ]; then printf '%s\n' "$req" >> "$APPROVER_LOG"; fi
case "$req" in
*please*) echo allow ;;
*crash*) echo "approver crashed" >&2; exit 3 ;;
*mumble*) echo "maybe later" ;;
*json*) echo '{"decision": "deny", "reason": "the JSON answer says no"}' ;;
*slow*) sleep 30; echo allow ;;
*) echo "deny: not polite enough" ;;
esac
