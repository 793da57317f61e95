package cli

import (
	"context"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/corpus/parquet"
	"github.com/batchprep/batchprep/internal/objstore"
)

// corpusFiles opens the corpora a command names, local files or objects
// (s3://BUCKET/KEY) read with the object flags' options (objectFlags).
type corpusFiles struct {
	ctx     context.Context
	objects objstore.Options
}

// open opens the corpus at path (file.OpenWith).
func (c corpusFiles) open(path string, cfg ctf.Config) (file.Reader, error) {
	return file.OpenWith(c.ctx, path, cfg, file.Options{Objects: c.objects})
}

// withBlob calls do with the bytes at path and closes them after.
func (c corpusFiles) withBlob(path string, do func(corpus.Blob) error) error {
	b, err := file.OpenBlob(c.ctx, path, c.objects)
	if err != nil {
		return err
	}
	defer b.Close()
	return do(b)
}

// detect is file.Detect; an object is opened to read its first bytes.
func (c corpusFiles) detect(path string) (f file.Format, err error) {
	if !file.IsObject(path) {
		return file.Detect(path), nil
	}
	err = c.withBlob(path, func(b corpus.Blob) error {
		f = file.DetectBlob(b, path)
		return nil
	})
	return f, err
}

// inferPrefix is ctf.InferPrefix of the corpus at path.
func (c corpusFiles) inferPrefix(path string, limit int64) (s []corpus.Stream, whole bool, err error) {
	err = c.withBlob(path, func(b corpus.Blob) error {
		s, whole, err = ctf.InferPrefixBlob(b, path, limit)
		return err
	})
	return s, whole, err
}

// inferCTF is ctf.InferStreams of the corpus at path.
func (c corpusFiles) inferCTF(path string) (s []corpus.Stream, err error) {
	err = c.withBlob(path, func(b corpus.Blob) error {
		s, err = ctf.InferStreamsBlob(b, path)
		return err
	})
	return s, err
}

// inferParquet is parquet.Infer of the corpus at path.
func (c corpusFiles) inferParquet(path string) (inf *parquet.Inference, err error) {
	err = c.withBlob(path, func(b corpus.Blob) error {
		inf, err = parquet.InferBlob(b, path)
		return err
	})
	return inf, err
}
