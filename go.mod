module github.com/compactkit/compact

go 1.26.0

require (
	github.com/goccy/go-json v0.12.0
	github.com/klauspost/compress v1.20.3
	github.com/spf13/cobra v1.10.2
	go.etcd.io/bbolt v1.5.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
