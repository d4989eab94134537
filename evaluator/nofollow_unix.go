//go:build unix

package evaluator

import "syscall"

// syscallNoFollow makes an open fail on a link instead of following it.
const syscallNoFollow = syscall.O_NOFOLLOW

// syscallNonBlock makes an open of a named pipe return at once instead of
// waiting for a writer.
const syscallNonBlock = syscall.O_NONBLOCK

// syscallLoop is the error of an open that met a link it must not follow.
const syscallLoop = syscall.ELOOP
