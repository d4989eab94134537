//go:build unix

package agent

import "syscall"

// openNoBlock are the flags with which the file tools open a path: a named
// pipe or a device does not make the open wait, nor a terminal become the
// controlling one.
const openNoBlock = syscall.O_NONBLOCK | syscall.O_NOCTTY

// openDirectory makes an open fail unless the path is a folder.
const openDirectory = syscall.O_DIRECTORY
