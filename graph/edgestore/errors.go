package edgestore

import (
	"errors"
	"io/fs"
	"path/filepath"
)

// Error is a storage error that names the file (or directory) involved.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string {
	// An *os.PathError on the same path would name it twice.
	var pe *fs.PathError
	if errors.As(e.Err, &pe) && e.Err == error(pe) && filepath.Clean(pe.Path) == filepath.Clean(e.Path) {
		return "edgestore: " + e.Path + ": " + pe.Op + ": " + pe.Err.Error()
	}
	return "edgestore: " + e.Path + ": " + e.Err.Error()
}
func (e *Error) Unwrap() error { return e.Err }

// ErrCorrupt marks data that fails a checksum or disagrees with its
// manifest; errors.Is(err, ErrCorrupt) tells it from I/O errors.
var ErrCorrupt = errors.New("corrupt data")

// corruptError wraps a description of the damage so that it matches
// ErrCorrupt.
type corruptError struct{ msg string }

func (e *corruptError) Error() string   { return e.msg + " (" + ErrCorrupt.Error() + ")" }
func (e *corruptError) Is(t error) bool { return t == ErrCorrupt }

func corrupt(path string, err error) error {
	var ce *corruptError
	if errors.As(err, &ce) {
		return &Error{Path: path, Err: ce} // already marked: do not say it twice
	}
	return &Error{Path: path, Err: &corruptError{err.Error()}}
}
