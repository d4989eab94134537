package runner

// SetRemoveAll makes r remove attempt folders with remove, for tests of
// when folders are removed.
func SetRemoveAll(r *Runner, remove func(string) error) { r.removeAll = remove }
