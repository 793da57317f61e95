package importer

import (
	"fmt"
)

// Reason classifies a bad line.
type Reason string

const (
	ReasonColumns   Reason = "wrong column count"
	ReasonEmpty     Reason = "empty field"
	ReasonRelation  Reason = "unknown relation"
	ReasonWeight    Reason = "bad weight"
	ReasonUTF8      Reason = "invalid UTF-8"
	ReasonQuoted    Reason = "quoted field"
	ReasonTooMany   Reason = "too many entities"
	ReasonLongLine  Reason = "line too long"
	ReasonRelations Reason = "too many relations"
	ReasonNull      Reason = "null value"
)

// LineError is a bad input line: file, 1-based line number and 1-based
// byte column of the offending field (0 when the whole line is at fault).
// In a Parquet file a line is a row: Line is the row's 1-based number in
// the file and Parquet says where it is and which column is at fault.
type LineError struct {
	File    string
	Line    int64
	Column  int
	Reason  Reason
	Msg     string
	Parquet *ParquetPos // nil for text files
}

// ParquetPos locates a bad row of a Parquet file.
type ParquetPos struct {
	RowGroup int    // 0-based row group
	Row      int64  // 0-based row in the file (DuckDB's file_row_number)
	Column   string // the offending column's name; "" when the whole row is at fault
}

func (e *LineError) Error() string {
	if q := e.Parquet; q != nil {
		col := ""
		if q.Column != "" {
			col = fmt.Sprintf(", column %q", q.Column)
		}
		return fmt.Sprintf("importer: %s: row group %d, row %d%s: %s: %s", e.File, q.RowGroup, q.Row, col, e.Reason, e.Msg)
	}
	if e.Column > 0 {
		return fmt.Sprintf("importer: %s:%d:%d: %s: %s", e.File, e.Line, e.Column, e.Reason, e.Msg)
	}
	return fmt.Sprintf("importer: %s:%d: %s: %s", e.File, e.Line, e.Reason, e.Msg)
}

// BudgetError is returned when more lines are bad than Options.MaxErrors
// allows. It unwraps to the line that broke the budget.
type BudgetError struct {
	Bad       int // bad lines seen, including this one
	MaxErrors int
	Last      *LineError
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("%v (bad line %d, max errors %d)", e.Last, e.Bad, e.MaxErrors)
}

func (e *BudgetError) Unwrap() error { return e.Last }
