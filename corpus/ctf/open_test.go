package ctf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// writeLarge writes a CTF file of at least size bytes (one-line sequences
// with a dense and a sparse stream) into a test directory.
func writeLarge(t testing.TB, size int) string {
	t.Helper()
	b := make([]byte, 0, size+64)
	for i := 0; len(b) < size; i++ {
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, " |x 0.25 "...)
		b = strconv.AppendInt(b, int64(i%1000), 10)
		b = append(b, " |y "...)
		b = strconv.AppendInt(b, int64(i%50), 10)
		b = append(b, ":1\n"...)
	}
	p := filepath.Join(t.TempDir(), "large.ctf")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var largeConfig = Config{Streams: []corpus.Stream{dense("x", 2), sparse("y", 50)}}

// TestOpenContextStops: invariant 13. A context cancelled during the index
// pass stops it at its next block, in the parallel pass (every range) and
// in the serial one: the bytes read stop short of the file and the error
// unwraps to context.Canceled. (Before, Open had no context and read the
// whole file whatever happened to the caller.)
func TestOpenContextStops(t *testing.T) {
	path := writeLarge(t, 40<<20)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	size := info.Size()
	for _, serial := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		var read atomic.Int64
		progress := func(n int64) {
			if read.Add(n) >= 4<<20 {
				cancel()
			}
		}
		if serial {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			cfg := largeConfig
			ix := newIndexer(&cfg, path)
			ix.pass = &pass{ctx: ctx, progress: progress}
			err = ix.run(f)
			f.Close()
		} else {
			_, err = OpenContext(ctx, path, largeConfig, OpenOptions{Progress: progress})
		}
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("serial %v: %v, want an error unwrapping to context.Canceled", serial, err)
		}
		// Each goroutine of the pass reads at most one more block (1 MiB).
		if got := read.Load(); got > 8<<20 {
			t.Errorf("serial %v: %d of %d bytes read after a cancel at 4 MiB", serial, got, size)
		}
	}
	// Without a cancel the same options index the whole file.
	var read atomic.Int64
	r, err := OpenContext(context.Background(), path, largeConfig, OpenOptions{Progress: func(n int64) { read.Add(n) }})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if read.Load() < size {
		t.Errorf("%d of %d bytes reported", read.Load(), size)
	}
}

// TestOpenContextFile: OpenOptions.File is read, not the path: a file
// renamed over the path after it was opened changes nothing; the Reader
// closes the file, and on error the caller still owns it.
func TestOpenContextFile(t *testing.T) {
	path := writeTemp(t, "1 |x 1 2\n2 |x 3 4\n3 |x 5 6\n")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(filepath.Dir(path), "other.ctf")
	os.WriteFile(other, []byte("1 |x 1 2\n2 |x 3 4\n3 |x 5 6\n4 |x 7 8\n5 |x 9 0\n"), 0o644)
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Streams: []corpus.Stream{dense("x", 2)}}
	r, err := OpenContext(context.Background(), path, cfg, OpenOptions{File: f})
	if err != nil {
		t.Fatal(err)
	}
	if n := r.Layout().NumSequences(); n != 3 {
		t.Errorf("%d sequences, want the 3 of the file opened (the path now names 5)", n)
	}
	r.Close()
	if _, err := f.Stat(); err == nil {
		t.Error("the file is still open after Reader.Close")
	}
	bad := writeTemp(t, "\xff\xfe1 |x 1 2\n")
	g, err := os.Open(bad)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := OpenContext(context.Background(), bad, cfg, OpenOptions{File: g}); err == nil {
		t.Fatal("a UTF-16 file opened")
	}
	if _, err := g.Stat(); err != nil {
		t.Errorf("the caller's file was closed on error: %v", err)
	}
}

// lender is a file that lends its bytes (corpus.Lender): each range in a
// buffer of its own, scribbled over when released, so that a parse that
// kept a reference to the bytes shows.
type lender struct {
	*os.File
	borrowed, released atomic.Int64
}

func (l *lender) Borrow(off, n int64) ([]byte, func(), error) {
	b := make([]byte, n)
	if _, err := l.ReadAt(b, off); err != nil {
		return nil, nil, err
	}
	l.borrowed.Add(1)
	return b, func() {
		for i := range b {
			b[i] = '|'
		}
		l.released.Add(1)
	}, nil
}

// TestLenderBytesParsedInPlace: a Blob that lends its bytes is parsed from
// them, chunk by chunk, to the same chunks as the file read with ReadAt;
// every range borrowed is released, and no chunk keeps the lent bytes.
func TestLenderBytesParsedInPlace(t *testing.T) {
	var text strings.Builder
	for i := range 300 {
		fmt.Fprintf(&text, "%d |x %d %d |s %d:1 |w %d\n", i/3, i, i+1, i%7, i)
	}
	path := writeTemp(t, text.String())
	cfg := Config{Streams: []corpus.Stream{dense("x", 2), sparse("s", 8)}, ChunkBytes: 512}
	want := loadAll(t, openString(t, text.String(), cfg, nil))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	l := &lender{File: f}
	r, err := OpenContext(context.Background(), path, cfg, OpenOptions{File: l})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := loadAll(t, r)
	if len(want) < 10 || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d chunks parsed from lent bytes, unlike the %d read with ReadAt", len(got), len(want))
	}
	if b, rel := l.borrowed.Load(), l.released.Load(); b != int64(len(want)) || rel != b {
		t.Fatalf("%d ranges borrowed and %d released for %d chunks", b, rel, len(want))
	}
}
