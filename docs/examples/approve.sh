#!/bin/sh
# An approver for bench (docs/permissions.md): it reads one asked call as a
# line of JSON on stdin and answers "allow" or "deny REASON" on stdout.
# This one allows the project's tests and nothing else.
req=$(cat)
case "$req" in
*'"command":"python3 -m unittest'* | *'"command":"go test'*) echo allow ;;
*) echo "deny only the project's tests may run here" ;;
esac
