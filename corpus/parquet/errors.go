package parquet

import (
	"errors"
	"fmt"
)

// Sentinel errors: every error about the file's contents is an *Error whose
// Err is one of these.
var (
	ErrNotParquet    = errors.New("parquet: not a Parquet file")
	ErrMissingColumn = errors.New("parquet: missing column")
	ErrColumnType    = errors.New("parquet: column of the wrong type")
	ErrNull          = errors.New("parquet: null value")
	ErrEmptyStream   = errors.New("parquet: stream without samples in a sequence")
	ErrDenseLength   = errors.New("parquet: dense sample of the wrong length")
	ErrIndexRange    = errors.New("parquet: sparse index out of range")
	ErrShape         = errors.New("parquet: values column shaped unlike its indices")
	ErrRowCount      = errors.New("parquet: column with a wrong number of rows")
	ErrTooLarge      = errors.New("parquet: sequence too large")
	ErrDamaged       = errors.New("parquet: damaged file")
	ErrCodec         = errors.New("parquet: compression codec without a decoder")
)

// Error is a problem with the contents of a Parquet file. RowGroup and Row
// are 0-based (Row counts rows from the start of the file, so it is the
// sequence's ordinal); they are -1 when the problem is not in one row
// (a missing column, a column of the wrong type).
type Error struct {
	File     string
	RowGroup int
	Row      int64
	Column   string
	Msg      string
	Err      error
}

func (e *Error) Error() string {
	where := e.File
	if e.RowGroup >= 0 {
		where += fmt.Sprintf(": row group %d, row %d", e.RowGroup, e.Row)
	}
	if e.Column != "" {
		where += fmt.Sprintf(", column %q", e.Column)
	}
	return where + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// damaged reports a file the Parquet library could not decode.
func damaged(file string, group int, row int64) *Error {
	return &Error{File: file, RowGroup: group, Row: row, Msg: "a damaged Parquet file: its pages cannot be decoded", Err: ErrDamaged}
}
