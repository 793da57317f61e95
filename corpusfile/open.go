package corpusfile

import (
	"path/filepath"
	"strings"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/ctf"
	"github.com/batchprep/batchprep/pqcorpus"
)

// Reader is an open corpus file.
type Reader interface {
	corpus.Source
	// Fingerprint identifies the file for the minibatch source's state.
	Fingerprint() map[string]string
	Path() string
	// Summary counts what was read so far (for Parquet, which Open checks
	// in full, only the totals).
	Summary() ctf.Summary
	Close() error
}

// Format names a corpus file format.
type Format string

const (
	CTF     Format = "ctf"
	Parquet Format = "parquet"
)

// Detect returns the format of the file at path (invariant 1).
func Detect(path string) Format {
	if strings.EqualFold(filepath.Ext(path), ".parquet") || pqcorpus.IsParquet(path) {
		return Parquet
	}
	return CTF
}

// Open opens the corpus at path with cfg. A Parquet file takes the streams,
// the defines-mb-size and label streams and the chunking from cfg; CTF's
// own settings (line mode, the index cache) do not apply to it, and since
// Open checks every row of a Parquet file, a bad row fails it whatever
// MaxErrors says.
func Open(path string, cfg ctf.Config) (Reader, error) {
	if Detect(path) == CTF {
		return ctf.Open(path, cfg)
	}
	r, err := pqcorpus.Open(path, ParquetConfig(cfg))
	if err != nil {
		return nil, err
	}
	return parquetReader{r}, nil
}

// ParquetConfig is the Parquet reader's part of a CTF configuration.
func ParquetConfig(cfg ctf.Config) pqcorpus.Config {
	return pqcorpus.Config{Streams: cfg.Streams, DefinesMBSize: cfg.DefinesMBSize, Label: cfg.Label,
		ChunkBytes: cfg.ChunkBytes, ChunkSequences: cfg.ChunkSequences}
}

// parquetReader adds a Summary to a pqcorpus.Reader.
type parquetReader struct{ *pqcorpus.Reader }

func (p parquetReader) Summary() ctf.Summary {
	return ctf.Summary{Sequences: p.Layout().NumSequences(), Chunks: p.Layout().NumChunks(),
		Samples: p.StreamSamples(), Skipped: map[string]int{}, Warnings: map[string]int{}}
}

// ParquetOf returns the Parquet reader behind r, if r reads Parquet.
func ParquetOf(r Reader) (*pqcorpus.Reader, bool) {
	p, ok := r.(parquetReader)
	return p.Reader, ok
}
