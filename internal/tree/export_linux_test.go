package tree

// Spreads reports whether dir has the top-directory flag.
var Spreads = spreads
