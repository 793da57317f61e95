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
// (s3://BUCKET/KEY) read with the object flags' options (objectFlags). An
// object is opened (looked up with a HEAD) once per command, and all the
// command does with it reads that version; close closes them.
type corpusFiles struct {
	ctx     context.Context
	objects objstore.Options
	opened  *objstore.Opened
}

func newCorpusFiles(ctx context.Context, objects objstore.Options) corpusFiles {
	return corpusFiles{ctx: ctx, objects: objects, opened: objstore.NewOpened(objects)}
}

// close closes the objects opened, after the readers of them.
func (c corpusFiles) close() { c.opened.Close() }

// open opens the corpus at path (file.OpenWith; file.OpenSharedObject for
// an object).
func (c corpusFiles) open(path string, cfg ctf.Config) (file.Reader, error) {
	if !file.IsObject(path) {
		return file.OpenWith(c.ctx, path, cfg, file.Options{Objects: c.objects})
	}
	o, err := c.opened.Open(c.ctx, path)
	if err != nil {
		return nil, err
	}
	return file.OpenSharedObject(c.ctx, o, cfg, file.Options{Objects: c.objects})
}

// withBlob calls do with the bytes at path (a local file is closed after).
func (c corpusFiles) withBlob(path string, do func(corpus.Blob) error) error {
	if file.IsObject(path) {
		o, err := c.opened.Open(c.ctx, path)
		if err != nil {
			return err
		}
		return do(o)
	}
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
