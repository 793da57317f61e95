package ctf

import (
	"errors"
	"testing"
)

// Invariant 7: the error text carries the position; Unwrap, Kind and
// IsWarning classify it.
func TestErrorClassification(t *testing.T) {
	e := &Error{File: "f.ctf", Line: 3, Col: 7, Offset: 40, Msg: "unexpected 'x'; expected a digit", Err: ErrNumber}
	if got, want := e.Error(), "ctf: f.ctf:3:7 (offset 40): unexpected 'x'; expected a digit"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, ErrNumber) || Kind(e) != "number" || IsWarning(e) {
		t.Errorf("classification of %v", e)
	}
	w := &Error{Err: ErrDenseShort}
	if !IsWarning(w) || Kind(w) != "dense-short" {
		t.Errorf("warning classification")
	}
	be := &BudgetError{MaxErrors: 2, Last: e}
	if !errors.Is(be, ErrTooManyErrors) || !errors.Is(be, ErrNumber) || Kind(errors.New("x")) != "other" {
		t.Errorf("budget error classification")
	}
	for s, k := range kinds {
		if Kind(s) != k {
			t.Errorf("Kind(%v) = %q, want %q", s, Kind(s), k)
		}
	}
}
