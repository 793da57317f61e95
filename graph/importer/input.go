package importer

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/batchprep/batchprep/internal/objstore"
)

// Input is an edge file as the importer reads it: a local *os.File or an
// object in object storage (*objstore.Object). A Parquet file is read with
// ReadAt, a text file from its start to its end (sequential).
type Input interface {
	io.ReaderAt
	io.Closer
	Stat() (fs.FileInfo, error)
}

// OpenInput opens the edge file at path: a local file, or an object named
// s3://BUCKET/KEY, read with opt (invariant 6). The caller closes it. An
// error names the file, or the object's bucket and key.
func OpenInput(ctx context.Context, path string, opt objstore.Options) (Input, error) {
	if objstore.IsURL(path) {
		return objstore.Open(ctx, path, opt)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("importer: %w", err)
	}
	return f, nil
}

// sequential returns a reader of in from its first byte: an object's is
// one streaming GET (objstore's NewReader), which neither reads nor fills
// the block cache; a file reads itself.
func sequential(in Input) io.ReadCloser {
	switch r := in.(type) {
	case interface{ NewReader(int64) io.ReadCloser }:
		return r.NewReader(0)
	case io.Reader:
		return io.NopCloser(r)
	}
	size := int64(0)
	if fi, err := in.Stat(); err == nil {
		size = fi.Size()
	}
	return io.NopCloser(io.NewSectionReader(in, 0, size))
}
