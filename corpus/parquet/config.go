package parquet

import (
	"fmt"

	"github.com/batchprep/batchprep/corpus"
)

// DefaultChunkBytes is the chunk size when neither ChunkBytes nor
// ChunkSequences is set.
const DefaultChunkBytes = 1 << 20

// IDColumn is the name of the optional column of sequence ids.
const IDColumn = "id"

// ValuesSuffix ends the name of a sparse stream's optional values column.
const ValuesSuffix = "_values"

// MaxDenseDim bounds a dense stream's dimension, as in every format.
const MaxDenseDim = corpus.MaxDenseDim

// Config says which columns to read and how to cut chunks. The first
// fields mean what the ctf.Config fields of the same names mean.
type Config struct {
	Streams        []corpus.Stream
	DefinesMBSize  string
	Label          string
	ChunkBytes     int64
	ChunkSequences int
	// CacheDir, when set, keeps the counts an index pass learns in
	// CacheDir/BASE.batchprep-index (CountsPath), and an open that finds
	// them there, made for the same version of the file and the same
	// settings, reads no rows (invariant 6).
	CacheDir string
	// Warn, when set, hears of a counts file that could not be used or
	// written (the message names the counts file, not the Parquet file);
	// the open goes on without it.
	Warn func(msg string)
	// OnIndexPass, when set, is called before an index pass reads the
	// rows: an object's reader then fetches whole blocks, since the pass
	// reads every row group.
	OnIndexPass func()
}

// Validate checks the configuration: the checks every format makes
// (corpus.StreamChoices), and two of Parquet's own: no stream may take the
// id column's name, and no stream may take the name of a sparse stream's
// values column.
func (c *Config) Validate() error {
	choices := corpus.StreamChoices{Streams: c.Streams, DefinesMBSize: c.DefinesMBSize, Label: c.Label,
		ChunkBytes: c.ChunkBytes, ChunkSequences: c.ChunkSequences}
	err := choices.Check(func(i int, s corpus.Stream) error {
		switch {
		case s.Name == "":
			return fmt.Errorf("stream %d has no name", i)
		case s.Name == IDColumn:
			return fmt.Errorf("stream %q: the column %q holds sequence ids; rename the stream", s.Name, IDColumn)
		}
		for _, t := range c.Streams[:i] {
			if t.Sparse && s.Name == t.Name+ValuesSuffix || s.Sparse && t.Name == s.Name+ValuesSuffix {
				return fmt.Errorf("streams %q and %q: the column %q holds the sparse stream's values", t.Name, s.Name, max(t.Name, s.Name))
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	return nil
}

func (c *Config) chunkBytes() int64 {
	if c.ChunkBytes > 0 {
		return c.ChunkBytes
	}
	return DefaultChunkBytes
}
