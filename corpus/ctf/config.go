package ctf

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/batchprep/batchprep/corpus"
)

// DefaultChunkBytes is the default chunk size (CNTK's chunkSizeInBytes).
const DefaultChunkBytes = 32 << 20

// MaxStreams bounds the number of configured streams (the indexer keeps a
// 64-bit mask of the streams each line carries).
const MaxStreams = 64

// MaxDenseDim and MaxSparseDim bound a stream's dimension (the corpus
// package's limits, the same in every format).
const (
	MaxDenseDim  = corpus.MaxDenseDim
	MaxSparseDim = corpus.MaxSparseDim
)

// Config describes how to read one CTF file. Zero values are the defaults.
type Config struct {
	// Streams are the inputs to read, in output order. Names are matched
	// exactly (case-sensitive) against the "|name" tokens of the file; other
	// names are skipped.
	Streams []corpus.Stream
	// DefinesMBSize names the stream whose lines count as samples; empty:
	// every line of a sequence is a sample.
	DefinesMBSize string
	// Label names the stream whose lines epoch sizes count; empty: the same
	// count as DefinesMBSize (Layout.Labels is then nil).
	Label string
	// ChunkBytes is the chunk size in bytes (default DefaultChunkBytes): a
	// new chunk starts when the next sequence would overflow it. A sequence
	// larger than ChunkBytes gets a chunk of its own.
	ChunkBytes int64
	// ChunkSequences, when > 0, cuts chunks by sequence count instead; it
	// cannot be combined with ChunkBytes.
	ChunkSequences int
	// MaxErrors is how many distinct bad sequences may be skipped before
	// reading fails (default 0: the first bad sequence fails).
	MaxErrors int
	// LineMode forces line mode (CNTK's skipSequenceIds): every line is a
	// one-sample sequence keyed by its 0-based line number, ids are ignored.
	LineMode bool
	// CacheIndex enables the on-disk index cache; CacheDir, when set, holds
	// the cache file instead of the data file's directory.
	CacheIndex bool
	CacheDir   string
	// Warn, when set, receives every warning (and every skipped bad
	// sequence's diagnostic). Library code never writes to stderr.
	Warn func(Error)
}

func (c *Config) chunkBytes() int64 {
	if c.ChunkBytes > 0 {
		return c.ChunkBytes
	}
	return DefaultChunkBytes
}

func (c *Config) streamIndex(name string) int {
	for i, s := range c.Streams {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// Validate checks the configuration (invariant 1 of the package doc).
func (c *Config) Validate() error {
	if len(c.Streams) > MaxStreams {
		return fmt.Errorf("ctf: config: %d streams, at most %d are supported", len(c.Streams), MaxStreams)
	}
	choices := corpus.StreamChoices{Streams: c.Streams, DefinesMBSize: c.DefinesMBSize, Label: c.Label,
		ChunkBytes: c.ChunkBytes, ChunkSequences: c.ChunkSequences}
	err := choices.Check(func(i int, s corpus.Stream) error {
		if err := validName(s.Name); err != nil {
			return fmt.Errorf("stream %d: %w", i, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ctf: %w", err)
	}
	if c.MaxErrors < 0 {
		return fmt.Errorf("ctf: config: max_errors %d, want >= 0", c.MaxErrors)
	}
	return nil
}

// validName reports whether s can appear as "|s" in a file: non-empty, not
// starting with '#', no delimiters (space, tab, '|', ':' or control bytes).
func validName(s string) error {
	if s == "" {
		return fmt.Errorf("empty stream name")
	}
	if s[0] == '#' {
		return fmt.Errorf("stream name %q starts with '#' (a comment)", s)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == '|' || c == ':' {
			return fmt.Errorf("stream name %q contains %q", s, c)
		}
	}
	return nil
}

// ParseStreamFlag parses a --stream value "NAME:DIM" or "NAME:DIM:sparse"
// (also "NAME:DIM:dense").
func ParseStreamFlag(s string) (corpus.Stream, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return corpus.Stream{}, fmt.Errorf("ctf: --stream %q: want NAME:DIM or NAME:DIM:sparse", s)
	}
	if err := validName(parts[0]); err != nil {
		return corpus.Stream{}, fmt.Errorf("ctf: --stream %q: %v", s, err)
	}
	dim, err := strconv.Atoi(parts[1])
	if err != nil || dim < 1 {
		return corpus.Stream{}, fmt.Errorf("ctf: --stream %q: dimension %q is not a positive integer", s, parts[1])
	}
	st := corpus.Stream{Name: parts[0], Dim: dim}
	if len(parts) == 3 {
		switch parts[2] {
		case "sparse":
			st.Sparse = true
		case "dense":
		default:
			return corpus.Stream{}, fmt.Errorf("ctf: --stream %q: format %q, want sparse or dense", s, parts[2])
		}
	}
	return st, nil
}

// FormatStreamFlag is the inverse of ParseStreamFlag.
func FormatStreamFlag(s corpus.Stream) string {
	if s.Sparse {
		return fmt.Sprintf("%s:%d:sparse", s.Name, s.Dim)
	}
	return fmt.Sprintf("%s:%d", s.Name, s.Dim)
}
