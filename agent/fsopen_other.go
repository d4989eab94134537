//go:build !unix

package agent

// openNoBlock: without named pipes in the file system, opening a path
// cannot wait for another process.
const openNoBlock = 0

// openDirectory: the folder check is the read of its entries.
const openDirectory = 0
