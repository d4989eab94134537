#!/bin/sh
# An approver for bench (docs/permissions.md): it allows the run_command
# calls that run `go test` with plain arguments, and denies every other call.
# bench writes the call on stdin as one line of JSON, for example
#   {"tool":"run_command","class":"exec","origin":"builtin","arguments":{"command":"go test ./..."},...}
# and reads the answer on stdout: "allow", or "deny" and a reason.
#
# The command runs under /bin/sh -c, where anything a shell interprets can
# start another program: `go test; curl ...`, `go test $(curl ...)`,
# `go test > x`. Rather than list those, this allows only the characters of
# plain words: letters, digits, spaces and . _ / = , : + -. Quotes,
# backslashes (so every JSON escape: \n, \" and \u0026 for &), non-ASCII
# bytes and all other characters are denied.
LC_ALL=C
export LC_ALL
set -f

deny() {
	echo "deny $*"
	exit 0
}

req=$(cat)
nl='
'
case $req in
*"$nl"*) deny "the request is more than one line" ;;
esac

# The built-in run_command only (an MCP server's tool has another origin),
# and its command first: bench writes the arguments with sorted keys.
prefix='{"tool":"run_command","class":"exec","origin":"builtin","arguments":{"command":"'
case $req in
"$prefix"*) ;;
*) deny "only run_command calls are approved here" ;;
esac
rest=${req#"$prefix"}
cmd=${rest%%'"'*} # up to the first quote

case $cmd in
*[!abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789' ._/=,:+-']*)
	deny "the command holds a character a shell could interpret; only letters, digits, spaces and . _ / = , : + - are allowed" ;;
esac
# With no backslash in it, that first quote ends the JSON string.
case ${rest#"$cmd"} in
'"}'* | '",'*) ;;
*) deny "the request is not the JSON bench writes" ;;
esac

case $cmd in
"go test" | "go test "*) ;;
*) deny "only go test is allowed here" ;;
esac

# go test itself can start other programs.
for word in $cmd; do
	case $word in
	-exec | -exec=* | --exec | --exec=* | -toolexec | -toolexec=* | --toolexec | --toolexec=*)
		deny "go test $word runs another program" ;;
	esac
done

echo allow
