package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpusfile"
	"github.com/batchprep/batchprep/ctf"
	"github.com/batchprep/batchprep/pqcorpus"
)

// indexed is a corpus file the reader cache keeps: a CTF file or a Parquet
// file, indexed once and read by every call with the same settings.
type indexed interface {
	// session returns the corpus one call reads, with its own error budget
	// and diagnostics (a Parquet file, checked in full when indexed, has
	// neither: every call reads the Reader itself).
	session(maxErrors int, warn func(ctf.Error)) (corpus.Source, error)
	Close() error
}

type ctfIndexed struct{ *ctf.Reader }

func (c ctfIndexed) session(maxErrors int, warn func(ctf.Error)) (corpus.Source, error) {
	return c.NewSession(maxErrors, warn)
}

type parquetIndexed struct{ *pqcorpus.Reader }

func (p parquetIndexed) session(int, func(ctf.Error)) (corpus.Source, error) { return p.Reader, nil }

// openIndexed indexes the open file f (at abs) in its format: Parquet when
// it starts with Parquet's magic or is named .parquet, CTF otherwise.
func openIndexed(ctx context.Context, f *os.File, abs string, cfg ctf.Config, progress func(int64)) (indexed, error) {
	var magic [4]byte
	n, _ := f.ReadAt(magic[:], 0)
	if string(magic[:n]) == pqcorpus.Magic || strings.EqualFold(filepath.Ext(abs), ".parquet") {
		r, err := pqcorpus.OpenFile(ctx, f, abs, corpusfile.ParquetConfig(cfg))
		if err != nil {
			return nil, err
		}
		return parquetIndexed{r}, nil
	}
	r, err := ctf.OpenContext(ctx, abs, cfg, ctf.OpenOptions{File: f, Progress: progress})
	if err != nil {
		return nil, err
	}
	return ctfIndexed{r}, nil
}
