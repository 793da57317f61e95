package ctf

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every diagnostic is an *Error (or an Error value passed to
// Config.Warn) whose Err is one of these, so callers can classify it with
// errors.Is.
var (
	// Hard errors: the sequence (or the file) is bad.
	ErrNumber         = errors.New("ctf: malformed number")
	ErrSparseEntry    = errors.New("ctf: malformed sparse entry")
	ErrIndexRange     = errors.New("ctf: sparse index out of range")
	ErrDenseTooLong   = errors.New("ctf: dense sample longer than its dimension")
	ErrStreamName     = errors.New("ctf: malformed stream name")
	ErrSyntax         = errors.New("ctf: unexpected character")
	ErrEmptyRow       = errors.New("ctf: row without samples")
	ErrEmptyStream    = errors.New("ctf: stream without samples in a sequence")
	ErrSampleCount    = errors.New("ctf: sample count does not match the row count")
	ErrDuplicateInput = errors.New("ctf: stream given twice on one row")
	ErrNoID           = errors.New("ctf: missing sequence id")
	ErrNoMBSizeStream = errors.New("ctf: sequence without a sample of the defines_mb_size stream")
	ErrEncoding       = errors.New("ctf: unsupported encoding")
	ErrTooManyErrors  = errors.New("ctf: error budget exhausted")
	ErrTooLarge       = errors.New("ctf: sequence too large")

	// Warnings: reported through Config.Warn and counted in the Summary.
	ErrDenseShort    = errors.New("ctf: dense sample shorter than its dimension (zero-padded)")
	ErrUnknownStream = errors.New("ctf: unknown stream name (skipped)")
	ErrSkippedLine   = errors.New("ctf: line without the defines_mb_size stream (skipped, line mode)")
	ErrCache         = errors.New("ctf: index cache unusable (rebuilt)")
	ErrNoNewline     = errors.New("ctf: last line has no newline (accepted)")
)

// kinds gives each sentinel a short name used as a Summary map key.
var kinds = map[error]string{
	ErrNumber: "number", ErrSparseEntry: "sparse-entry", ErrIndexRange: "index-range",
	ErrDenseTooLong: "dense-too-long", ErrStreamName: "stream-name", ErrSyntax: "syntax", ErrEmptyRow: "empty-row",
	ErrEmptyStream: "empty-stream", ErrSampleCount: "sample-count", ErrDuplicateInput: "duplicate-input",
	ErrNoID: "no-id", ErrNoMBSizeStream: "no-mb-size-stream", ErrEncoding: "encoding",
	ErrTooManyErrors: "too-many-errors", ErrTooLarge: "too-large",
	ErrDenseShort: "dense-short", ErrUnknownStream: "unknown-stream", ErrSkippedLine: "skipped-line",
	ErrCache: "cache", ErrNoNewline: "no-final-newline",
}

// Kind returns the short name of err's sentinel ("number", "dense-short",
// ...), or "other".
func Kind(err error) string {
	for s, k := range kinds {
		if errors.Is(err, s) {
			return k
		}
	}
	return "other"
}

// Error is a diagnostic with its position in the input. Line and Col are
// 1-based (Col counts bytes); Offset is the 0-based byte offset in the file.
// Line 0 means no position: the diagnostic is about a whole file (an index
// cache that cannot be used), and its text names the file alone.
type Error struct {
	File   string
	Line   int64
	Col    int
	Offset int64
	Msg    string // what was found and what was expected
	Err    error  // the sentinel (ErrNumber, ErrDenseShort, ...)
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("ctf: %s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("ctf: %s:%d:%d (offset %d): %s", e.File, e.Line, e.Col, e.Offset, e.Msg)
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// BudgetError is returned once more distinct bad sequences were met than
// Config.MaxErrors allows. It unwraps to ErrTooManyErrors and to the
// diagnostic of the sequence that exhausted the budget.
type BudgetError struct {
	MaxErrors int
	Last      *Error
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("ctf: more than %d bad sequences (max_errors); the last: %v", e.MaxErrors, e.Last)
}

// Unwrap returns ErrTooManyErrors and the last diagnostic.
func (e *BudgetError) Unwrap() []error { return []error{ErrTooManyErrors, e.Last} }

// IsWarning reports whether err is a warning (the data was read, perhaps
// padded or with something skipped) rather than a bad sequence or file.
func IsWarning(err error) bool {
	for _, w := range []error{ErrDenseShort, ErrUnknownStream, ErrSkippedLine, ErrCache, ErrNoNewline} {
		if errors.Is(err, w) {
			return true
		}
	}
	return false
}
