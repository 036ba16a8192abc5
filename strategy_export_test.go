package compact

// CheckStrategy exposes checkStrategy to the external test package.
var CheckStrategy = checkStrategy
