// Package proxy is the third front door of compact: an HTTP proxy that an
// agent points its API base URL at, which keeps every conversation inside
// the model's context window by compacting it in flight, and otherwise
// passes every byte through untouched.
package proxy
