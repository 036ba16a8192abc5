// Package report renders one session as a self-contained HTML page: how
// full the context was at every model call, where and why it was
// compacted, what each summary says, which files the agent touched and
// which messages weigh the most.
//
// The page is built in two steps. Build turns a session's entries (every
// entry of the file and the root-to-leaf path to follow) and the settings
// the caller resolved (model, window, trigger policy) into a Report: plain
// values that tests can check without parsing HTML. Render writes that
// Report as one HTML document.
//
// The document needs nothing but itself: its stylesheet and its few
// lines of script are embedded in the program (package embed) and inlined
// into the page, and the chart is inline SVG whose coordinates are
// computed here, in Go. It makes no network request, so it opens from
// disk, offline, and prints the same way. html/template writes it, so
// every string taken from the session (summaries, file names, message
// previews) is escaped for the place it lands in.
//
// Why no charting library: the chart is one line of points, two
// horizontal lines and a few vertical markers. A Go SVG library would add
// a dependency for a dozen elements, and a JavaScript one would have to be
// vendored into every page; a few lines of arithmetic do the job.
//
// The package reads only the provider-neutral entries of package compact,
// so a session converted from another agent's format renders the same way
// as a pi session.
package report
