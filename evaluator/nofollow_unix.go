//go:build unix

package evaluator

import "syscall"

// syscallNoFollow makes an open fail on a link instead of following it.
const syscallNoFollow = syscall.O_NOFOLLOW
