//go:build !unix

package evaluator

const syscallNoFollow = 0
