package ctf

import (
	"bytes"
	"errors"
	"math/bits"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

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

// seqOffset is the file offset of sequence i.
func seqOffset(x *index, i int) int64 {
	c := x.layout().ChunkOf(i)
	return x.chunkOff[c] + int64(x.rel[i])
}

// chunkBytes returns chunk c's bytes out of the whole file data.
func chunkBytes(x *index, c int, data []byte) []byte {
	off, n := x.span(c)
	return data[off : off+n]
}

// carriedTotals counts, per stream, the lines of the indexed sequences that
// carry it, with carriedReference (not the SWAR matcher).
func carriedTotals(x *index, cfg *Config, data []byte) []int64 {
	var names []string
	for _, s := range cfg.Streams {
		names = append(names, s.Name)
	}
	out := make([]int64, len(names))
	for i := range x.samples {
		off := seqOffset(x, i)
		for _, line := range bytes.Split(bytes.TrimSuffix(data[off:off+int64(x.sizes[i])], []byte{'\n'}), []byte{'\n'}) {
			for m := carriedReference(names, line); m != 0; m &= m - 1 {
				out[bits.TrailingZeros64(m)]++
			}
		}
	}
	return out
}

// content is x without what says where its tables live (the heap or a
// mapped index file) and what it has cached: two indexes of the same file
// and config have the same content.
func content(x *index) *index {
	if x == nil {
		return nil
	}
	y := &index{lineMode: x.lineMode, chunkOff: x.chunkOff, chunkLine: x.chunkLine, chunkStart: x.chunkStart,
		dropped: x.dropped, skippedLines: x.skippedLines, skipped: x.skipped, size: x.size, lastLine: x.lastLine, lastCol: x.lastCol,
		chunkSamples: x.chunkSamples, chunkLabels: x.chunkLabels, chunkEnd: x.chunkEnd, chunkCRC: x.chunkCRC, n: x.n, hasLabels: x.hasLabels}
	for _, p := range []struct {
		dst *[]uint32
		src []uint32
	}{{&y.rel, x.rel}, {&y.sizes, x.sizes}, {&y.samples, x.samples}, {&y.labels, x.labels}} {
		if len(p.src) > 0 {
			*p.dst = slices.Clone(p.src)
		}
	}
	if x.hasLabels && y.labels == nil {
		y.labels = []uint32{}
	}
	return y
}

// sameIndex reports whether a and b have the same content.
func sameIndex(a, b *index) bool { return reflect.DeepEqual(content(a), content(b)) }
