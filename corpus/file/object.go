package file

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/parquet"
	"github.com/batchprep/batchprep/internal/objstore"
)

// Options are choices of OpenWith that do not change what is read.
type Options struct {
	// Objects configures the reads of a corpus named by an s3:// URL: the
	// GETs in flight, retries and the local cache (objstore.Options; the
	// zero value means every default).
	Objects objstore.Options
	// Progress, when set, hears of the bytes a CTF index pass reads.
	Progress func(int64)
}

// IsObject reports whether path names an object in object storage
// (s3://BUCKET/KEY) rather than a local file.
func IsObject(path string) bool { return objstore.IsURL(path) }

// OpensAtOnce reports whether the corpus at path may open beside others
// (a mixture's, corpus/mixture): a Parquet object's open waits on round
// trips (a HEAD, a footer), while a CTF corpus's or a local file's may be
// an index pass on every core, so those open one at a time.
func OpensAtOnce(path string) bool { return IsObject(path) && Detect(path) == Parquet }

// MixOpens is how many of a mixture's corpora open at once.
const MixOpens = 8

// openObject opens the corpus in the object at url (invariant 4). A CTF
// object's index is always cached, in the cache directory under
// index/<hash of the URL>, and reused while the object's ETag, its size
// and the config match; a Parquet object is read from its footer and the
// blocks of the columns it needs.
func openObject(ctx context.Context, url string, cfg ctf.Config, opt Options) (Reader, error) {
	obj, err := objstore.Open(ctx, url, opt.Objects)
	if err != nil {
		return nil, err
	}
	r, err := openObjectReader(ctx, obj, obj, url, cfg, opt)
	if err != nil {
		obj.Close()
		return nil, err
	}
	return r, nil
}

// openObjectReader opens the corpus in obj, read through blob (obj
// itself, or obj kept open).
func openObjectReader(ctx context.Context, obj *objstore.Object, blob corpus.Blob, url string, cfg ctf.Config, opt Options) (Reader, error) {
	if DetectBlob(blob, url) == Parquet {
		r, err := parquet.OpenFile(ctx, blob, url, ParquetConfig(cfg))
		if err != nil {
			return nil, err
		}
		return parquetReader{r}, nil
	}
	sum := sha256.Sum256([]byte(url))
	cfg.CacheIndex = true
	cfg.CacheDir = filepath.Join(obj.CacheDir(), "index", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(cfg.CacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("ctf: the index cache of %s: %w", url, err)
	}
	r, err := ctf.OpenContext(ctx, url, cfg, ctf.OpenOptions{File: blob, Progress: opt.Progress})
	if err != nil {
		return nil, err
	}
	return ctfReader{r}, nil
}
