package file

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

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
	// IndexDir, when set, keeps a local CTF file's index in IndexDir, as
	// an object's is kept in its cache directory (IndexCache).
	IndexDir string
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

// IndexCache returns cfg set to keep the index of the CTF corpus name (an
// object's URL, or a local file's absolute path) in dir/index/<hash of
// name>, a directory of its own, which it makes: two corpora of the same
// base name never share a cache file. The cache is reused while the data
// and the config match (ctf.Config.CacheIndex).
//
// Each use sets the directory's modification time, which PruneIndexCaches
// reads.
func IndexCache(cfg ctf.Config, dir, name string) (ctf.Config, error) {
	sum := sha256.Sum256([]byte(name))
	cfg.CacheIndex = true
	cfg.CacheDir = filepath.Join(dir, "index", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(cfg.CacheDir, 0o755); err != nil {
		return cfg, fmt.Errorf("ctf: the index cache of %s: %w", name, err)
	}
	now := time.Now()
	if err := os.Chtimes(cfg.CacheDir, now, now); err != nil {
		return cfg, fmt.Errorf("ctf: the index cache of %s: %w", name, err)
	}
	return cfg, nil
}

// IndexCacheUnused is how long an index cache may go unused before
// PruneIndexCaches removes it.
const IndexCacheUnused = 30 * 24 * time.Hour

// PruneIndexCaches removes the index caches under dir/index that no open
// has used for longer than unused (IndexCache), those of corpora deleted
// or renamed among them, and returns how many it removed. A cache removed
// while a reader maps it stays readable to that reader.
func PruneIndexCaches(dir string, unused time.Duration) (int, error) {
	root := filepath.Join(dir, "index")
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !e.IsDir() || time.Since(info.ModTime()) <= unused {
			continue
		}
		if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
			return removed, err
		}
		removed++
	}
	return removed, nil
}

// openObject opens the corpus in the object at url (invariant 4). A CTF
// object's index, and a Parquet object's counts, are always cached, in the
// cache directory under index/<hash of the URL>, and reused while the
// object's ETag, its size and the config match; a Parquet object whose
// counts are there is read from its footer and the pages of the chunks
// loaded.
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
		pcfg, err := objectParquetConfig(obj, url, cfg)
		if err != nil {
			return nil, err
		}
		fetchPublishedIndex(ctx, obj, url, parquet.CountsPath(url, pcfg), nil, cfg.Warn)
		r, err := parquet.OpenFile(ctx, blob, url, pcfg)
		if err != nil {
			return nil, err
		}
		return parquetReader{Reader: r, obj: obj}, nil
	}
	cfg, err := IndexCache(cfg, obj.CacheDir(), url)
	if err != nil {
		return nil, err
	}
	verify := func() error { return ctf.VerifyCacheOf(blob, url, cfg) }
	fetchPublishedIndex(ctx, obj, url, ctf.CachePath(url, cfg), verify, cfg.Warn)
	r, err := ctf.OpenContext(ctx, url, cfg, ctf.OpenOptions{File: blob, Progress: opt.Progress})
	if err != nil {
		return nil, err
	}
	return ctfReader{Reader: r, obj: obj}, nil
}

// ObjectStats returns the requests and bytes of the object r reads, so
// far, and false when r reads a local file.
func ObjectStats(r Reader) (objstore.Stats, bool) {
	var obj *objstore.Object
	switch r := r.(type) {
	case ctfReader:
		obj = r.obj
	case parquetReader:
		obj = r.obj
	}
	if obj == nil {
		return objstore.Stats{}, false
	}
	return obj.Stats(), true
}

// objectParquetConfig is the Parquet reader's config for the object obj at
// url: its counts kept where a CTF object's index would be, cache problems
// reported as a CTF reader reports them, and whole blocks fetched while an
// index pass reads every row group (exact reads are for loads of chunks
// far apart, not for a pass).
func objectParquetConfig(obj *objstore.Object, url string, cfg ctf.Config) (parquet.Config, error) {
	cfg, err := IndexCache(cfg, obj.CacheDir(), url)
	if err != nil {
		return parquet.Config{}, err
	}
	pcfg := ParquetConfig(cfg)
	pcfg.CacheDir = cfg.CacheDir
	pcfg.Warn = cacheWarning(url, cfg.Warn)
	pcfg.OnIndexPass = func() { obj.SetExact(false) }
	return pcfg, nil
}
