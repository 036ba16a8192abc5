module github.com/compactkit/compact

go 1.26

require github.com/goccy/go-json v0.12.0
