package compact

import "encoding/json"

// EntryKind is the type of a session entry.
type EntryKind string

// Entry kinds, named as in pi's session format.
const (
	KindMessage             EntryKind = "message"
	KindCompaction          EntryKind = "compaction"
	KindBranchSummary       EntryKind = "branch_summary"
	KindModelChange         EntryKind = "model_change"
	KindThinkingLevelChange EntryKind = "thinking_level_change"
	KindCustom              EntryKind = "custom"
	KindCustomMessage       EntryKind = "custom_message"
	KindLabel               EntryKind = "label"
	KindSessionInfo         EntryKind = "session_info"
	// KindContextEdit records one pass of a cheap strategy: replacement
	// content for earlier messages, applied when the context is rebuilt.
	// It is this project's own entry type; pi ignores it.
	KindContextEdit EntryKind = "context_edit"
)

// Entry is one node of a conversation log: a message, a compaction, or a
// piece of metadata. Entries form a tree through ParentID; the path from
// the root to a leaf is one linear conversation.
//
// Kinds this package does not know keep their Kind string and are treated
// as metadata: they never reach the model.
type Entry struct {
	ID       string
	ParentID string // "" for a root entry
	Kind     EntryKind
	// Timestamp is the entry time as stored (RFC 3339), possibly empty.
	Timestamp string

	// Message is set for kinds that put a message into the context:
	// message, custom_message (role custom) and branch_summary (role
	// branchSummary, the summary as its text).
	Message *Message

	// Compaction is set for compaction entries.
	Compaction *Compaction

	// Edit is set for context_edit entries.
	Edit *ContextEdit

	// Meta holds the fields of the metadata kinds: model and thinking
	// level changes, labels, session info and custom entries. It is nil
	// for the other kinds, so that a message, the bulk of any session,
	// carries no room for them.
	Meta *EntryMeta
}

// EntryMeta holds the fields of the metadata entry kinds. Each kind uses
// the few fields named beside it; the others stay empty.
type EntryMeta struct {
	// Provider and ModelID are set for model_change entries.
	Provider string
	ModelID  string

	// ThinkingLevel is set for thinking_level_change entries.
	ThinkingLevel string

	// TargetID and Label are set for label entries; an empty Label clears
	// the target's label.
	TargetID string
	Label    string

	// Name is set for session_info entries.
	Name string

	// CustomType is set for custom and custom_message entries.
	CustomType string

	// Data is the JSON a custom entry stores for its extension, as
	// stored; nil when there is none.
	Data json.RawMessage
}

// Metadata returns a copy of *e.Meta, or the zero EntryMeta when Meta is
// nil: the metadata fields, read without a nil check.
func (e *Entry) Metadata() EntryMeta {
	if e.Meta == nil {
		return EntryMeta{}
	}
	return *e.Meta
}

// ContextEdit is one non-destructive pass over the context: for each
// target entry, the content the model sees instead of the stored one. The
// stored messages are never changed; BuildContext applies the edits of the
// path, and BuildOriginalContext ignores them.
type ContextEdit struct {
	// Strategy names the pass ("prune", "mask", "truncate", ...).
	Strategy string
	// Edits are the replacements, in context order.
	Edits []Edit
	// TokensFreed is the estimate the pass saved.
	TokensFreed int
	// FirstChangedID is the entry of the first message the pass changed:
	// the point from which a provider's prompt cache is rewritten.
	FirstChangedID string
}

// Edit replaces the content of one message in the model's context. A tool
// result keeps its entry, role and tool call id, so call/result pairing
// holds; only its content changes.
type Edit struct {
	// TargetID is the entry whose message is replaced.
	TargetID string
	// Content is what the model sees instead.
	Content []Part
}

// IsContextMessage reports whether the entry contributes a message to the
// model's context.
func (e *Entry) IsContextMessage() bool {
	return e.Message != nil && (e.Kind == KindMessage || e.Kind == KindCustomMessage || e.Kind == KindBranchSummary)
}

// Compaction records one compaction: everything on the path before
// FirstKeptID is replaced in the context by Summary.
type Compaction struct {
	Summary     string
	FirstKeptID string
	// TokensBefore is the context size when the compaction ran.
	TokensBefore int
	// TokensAfter is the estimated context size right after it; 0 when
	// not recorded (pi does not record it).
	TokensAfter int
	// ReadFiles and ModifiedFiles accumulate the files the agent touched,
	// across every compaction so far.
	ReadFiles     []string
	ModifiedFiles []string
	// HasFileDetails reports whether the stored entry carried file lists.
	HasFileDetails bool
	// FromHook is true when an extension, not the engine, wrote the summary;
	// its details are then not trusted for file tracking.
	FromHook bool
	// Details holds the extra fields written by this engine into the
	// entry's details object (reason, summarizer, ...), as plain values.
	Details map[string]any
}
