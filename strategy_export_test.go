package compact

// CheckStrategy exposes checkStrategy to the external test package.
var CheckStrategy = checkStrategy

// TokensAfter is tokensAfter on the context of path.
func TokensAfter(path []*Entry, ce *ContextEdit) int {
	c := BuildContext(path)
	return tokensAfter(path, c, Measure(c), ce, nil)
}
