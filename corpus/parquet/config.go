package parquet

import (
	"fmt"
	"strings"

	"github.com/batchprep/batchprep/corpus"
)

// DefaultChunkBytes is the chunk size when neither ChunkBytes nor
// ChunkSequences is set.
const DefaultChunkBytes = 1 << 20

// IDColumn is the name of the optional column of sequence ids.
const IDColumn = "id"

// ValuesSuffix ends the name of a sparse stream's optional values column.
const ValuesSuffix = "_values"

// MaxDenseDim bounds a dense stream's dimension, as CTF's reader does.
const MaxDenseDim = 1 << 24

// Config says which columns to read and how to cut chunks. The fields mean
// what the ctf.Config fields of the same names mean.
type Config struct {
	Streams        []corpus.Stream
	DefinesMBSize  string
	Label          string
	ChunkBytes     int64
	ChunkSequences int
}

func (c *Config) streamIndex(name string) int {
	for i, s := range c.Streams {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if len(c.Streams) == 0 {
		return fmt.Errorf("pqcorpus: config: no streams")
	}
	for i, s := range c.Streams {
		switch {
		case s.Name == "":
			return fmt.Errorf("pqcorpus: config: stream %d has no name", i)
		case s.Name == IDColumn:
			return fmt.Errorf("pqcorpus: config: stream %q: the column %q holds sequence ids; rename the stream", s.Name, IDColumn)
		case s.Dim < 1:
			return fmt.Errorf("pqcorpus: config: stream %q: dim %d, want >= 1", s.Name, s.Dim)
		case !s.Sparse && s.Dim > MaxDenseDim:
			return fmt.Errorf("pqcorpus: config: stream %q: dense dim %d exceeds the limit %d", s.Name, s.Dim, MaxDenseDim)
		case s.Sparse && s.Dim > 1<<31-1:
			return fmt.Errorf("pqcorpus: config: stream %q: sparse dim %d exceeds 2^31-1", s.Name, s.Dim)
		}
		for _, t := range c.Streams[:i] {
			if t.Name == s.Name {
				return fmt.Errorf("pqcorpus: config: stream %q configured twice", s.Name)
			}
			if t.Sparse && s.Name == t.Name+ValuesSuffix || s.Sparse && t.Name == s.Name+ValuesSuffix {
				return fmt.Errorf("pqcorpus: config: streams %q and %q: the column %q holds the sparse stream's values", t.Name, s.Name, max(t.Name, s.Name))
			}
		}
	}
	if strings.Contains(c.DefinesMBSize, ",") {
		return fmt.Errorf("pqcorpus: config: defines_mb_size %q: only a single stream may define the minibatch size", c.DefinesMBSize)
	}
	if c.DefinesMBSize != "" && c.streamIndex(c.DefinesMBSize) < 0 {
		return fmt.Errorf("pqcorpus: config: defines_mb_size %q is not a configured stream", c.DefinesMBSize)
	}
	if c.Label != "" && c.streamIndex(c.Label) < 0 {
		return fmt.Errorf("pqcorpus: config: label %q is not a configured stream", c.Label)
	}
	if c.ChunkBytes < 0 || c.ChunkSequences < 0 {
		return fmt.Errorf("pqcorpus: config: negative chunk size")
	}
	if c.ChunkBytes > 0 && c.ChunkSequences > 0 {
		return fmt.Errorf("pqcorpus: config: chunk_bytes and chunk_sequences are mutually exclusive")
	}
	return nil
}

func (c *Config) chunkBytes() int64 {
	if c.ChunkBytes > 0 {
		return c.ChunkBytes
	}
	return DefaultChunkBytes
}
