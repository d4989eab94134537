// A forgery split over two files: the init is innocent-looking, the work
// is done by a function of another carried file of the package.
package semver

func init() {
	setup()
}
