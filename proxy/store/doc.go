// Package store is the proxy's state contract: what a conversation's
// record holds between requests (Record, Checkpoint, LastCall), the
// interface a store implements (Store, with the optional LastStore,
// Locker, Pinger and Evicter), the rules every store applies (CheckKey,
// DefaultTTL, DefaultMaxBytes, record sealing with SealRecord and
// OpenRecord, and the errors ErrNotFound, ErrCorrupt, ErrClosed,
// ErrLockLost and ErrUnauthenticated), and two stores that live in the
// process: Memory and Fallback.
//
// The stores kept elsewhere implement the same contract in
// subpackages: bolt (a file on one machine) and redis (shared by
// replicas). They import this package and nothing else of the proxy, so
// a program that only reads or writes proxy state does not link the
// proxy's HTTP server, metrics or codecs. The conformance suite every
// store passes is storetest.
package store
