package ctf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// sharedData returns ../shared/data/<rel> resolved from the module root
// (the directory holding go.mod), skipping the test when it is absent.
func sharedData(t testing.TB, rel string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("module root not found")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "data", rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared data %s absent (%v); it lives beside the project in ../shared/data", rel, err)
	}
	return p
}

// writeTemp writes content to a fresh file and returns its path.
func writeTemp(t testing.TB, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "data.ctf")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// openString indexes content with cfg; warnings are collected in *warns.
func openString(t testing.TB, content string, cfg Config, warns *[]Error) *Reader {
	t.Helper()
	if warns != nil {
		cfg.Warn = func(e Error) { *warns = append(*warns, e) }
	}
	r, err := Open(writeTemp(t, content), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// loadAll loads every chunk and returns them.
func loadAll(t testing.TB, r *Reader) []*corpus.Chunk {
	t.Helper()
	var out []*corpus.Chunk
	for c := 0; c < r.Layout().NumChunks(); c++ {
		ch, err := r.LoadChunk(c)
		if err != nil {
			t.Fatalf("LoadChunk(%d): %v", c, err)
		}
		out = append(out, ch)
	}
	return out
}

func asError(t testing.TB, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *ctf.Error", err, err)
	}
	return e
}

func dense(name string, dim int) corpus.Stream { return corpus.Stream{Name: name, Dim: dim} }
func sparse(name string, dim int) corpus.Stream {
	return corpus.Stream{Name: name, Dim: dim, Sparse: true}
}

func buildIndexString(s string, cfg Config) (*index, error) {
	return buildIndex(strings.NewReader(s), &cfg, "mem")
}
