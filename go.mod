module github.com/compactkit/compact

go 1.26
