//go:build !unix

package evaluator

const syscallNoFollow = 0

// syscallNonBlock is 0 where named pipes are not a concern.
const syscallNonBlock = 0

// syscallLoop is never returned where links are not refused.
var syscallLoop error
