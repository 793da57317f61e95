package corpus

import (
	"fmt"
	"strings"
)

// MaxDenseDim bounds a dense stream's dimension in every format: each of its
// samples is a row of that many float32s, allocated before any value is read.
const MaxDenseDim = 1 << 24

// MaxSparseDim bounds a sparse stream's dimension: its indices are int32.
const MaxSparseDim = 1<<31 - 1

// StreamChoices are the reading choices that every format checks the same
// way: the declared streams, the stream that counts samples, the label
// stream, and the chunk size (in bytes or in sequences, at most one of them).
type StreamChoices struct {
	Streams        []Stream
	DefinesMBSize  string
	Label          string
	ChunkBytes     int64
	ChunkSequences int
}

// Check reports the first choice that no format can read: no streams, a
// dimension out of range, a stream declared twice, a defines_mb_size that is
// a list or names no declared stream, a label that names none, a negative
// chunk size or both chunk sizes. name, when not nil, checks each stream's
// name first (the rules differ by format). Errors start with "config:";
// a format's Validate prefixes its own name.
func (c StreamChoices) Check(name func(i int, s Stream) error) error {
	if len(c.Streams) == 0 {
		return fmt.Errorf("config: no streams")
	}
	for i, s := range c.Streams {
		if name != nil {
			if err := name(i, s); err != nil {
				return fmt.Errorf("config: %w", err)
			}
		}
		switch {
		case s.Dim < 1:
			return fmt.Errorf("config: stream %q: dim %d, want >= 1", s.Name, s.Dim)
		case !s.Sparse && s.Dim > MaxDenseDim:
			return fmt.Errorf("config: stream %q: dense dim %d exceeds the limit %d (each sample would take %d MiB)", s.Name, s.Dim, MaxDenseDim, int64(s.Dim)*4>>20)
		case s.Sparse && s.Dim > MaxSparseDim:
			return fmt.Errorf("config: stream %q: sparse dim %d exceeds 2^31-1", s.Name, s.Dim)
		}
		for _, t := range c.Streams[:i] {
			if t.Name == s.Name {
				return fmt.Errorf("config: stream %q configured twice", s.Name)
			}
		}
	}
	if strings.Contains(c.DefinesMBSize, ",") {
		return fmt.Errorf("config: defines_mb_size %q: only a single stream may define the minibatch size", c.DefinesMBSize)
	}
	if c.DefinesMBSize != "" && c.index(c.DefinesMBSize) < 0 {
		return fmt.Errorf("config: defines_mb_size %q is not a configured stream", c.DefinesMBSize)
	}
	if c.Label != "" && c.index(c.Label) < 0 {
		return fmt.Errorf("config: label %q is not a configured stream", c.Label)
	}
	if c.ChunkBytes < 0 || c.ChunkSequences < 0 {
		return fmt.Errorf("config: negative chunk size")
	}
	if c.ChunkBytes > 0 && c.ChunkSequences > 0 {
		return fmt.Errorf("config: chunk_bytes and chunk_sequences are mutually exclusive")
	}
	return nil
}

// index returns the position of the stream called name, or -1.
func (c StreamChoices) index(name string) int {
	for i, s := range c.Streams {
		if s.Name == name {
			return i
		}
	}
	return -1
}
