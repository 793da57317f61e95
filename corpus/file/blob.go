package file

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/parquet"
	"github.com/batchprep/batchprep/internal/objstore"
)

// OpenBlob opens the bytes at path, a local file or an object
// (s3://BUCKET/KEY, read with opt), for a reader that takes a corpus.Blob
// (stream inference, for one). The caller closes it. An error names the
// file, or the object's bucket and key.
func OpenBlob(ctx context.Context, path string, opt objstore.Options) (corpus.Blob, error) {
	if IsObject(path) {
		return objstore.Open(ctx, path, opt)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Detect(path), err)
	}
	return f, nil
}

// DetectBlob is Detect of the blob f that path names: Parquet when f
// starts with PAR1 or path ends in .parquet (invariant 1).
func DetectBlob(f corpus.Blob, path string) Format {
	var magic [4]byte
	n, _ := f.ReadAt(magic[:], 0)
	if string(magic[:n]) == parquet.Magic || strings.EqualFold(filepath.Ext(path), ".parquet") {
		return Parquet
	}
	return CTF
}

// CTFOf returns the CTF reader behind r, if r reads CTF.
func CTFOf(r Reader) (*ctf.Reader, bool) {
	c, ok := r.(ctfReader)
	return c.Reader, ok
}
