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
	"github.com/batchprep/batchprep/internal/direct"
	"github.com/batchprep/batchprep/internal/objstore"
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
	// Session returns the corpus one reading of the file sees, with its
	// own error budget and warnings (ctf.Reader.NewSession), so that
	// several readings (a server's calls) share one index. A Parquet file,
	// checked in full when opened, has neither: its session is the Reader.
	Session(maxErrors int, warn func(ctf.Error)) (corpus.Source, error)
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
	if strings.EqualFold(filepath.Ext(path), ".parquet") || parquet.IsParquet(path) {
		return Parquet
	}
	return CTF
}

// Open opens the corpus at path with cfg. A Parquet file takes the streams,
// the defines-mb-size and label streams and the chunking from cfg, and the
// index cache keeps its counts (parquet invariant 6); CTF's line mode does
// not apply to it, and a bad row of a Parquet file fails the open, or the
// load that meets it, whatever MaxErrors says.
func Open(path string, cfg ctf.Config) (Reader, error) {
	if IsObject(path) {
		return OpenWith(context.Background(), path, cfg, Options{})
	}
	if Detect(path) == CTF {
		r, err := ctf.Open(path, cfg)
		if err != nil {
			return nil, err
		}
		return ctfReader{Reader: r}, nil
	}
	r, err := parquet.Open(path, localParquetConfig(path, cfg, ""))
	if err != nil {
		return nil, err
	}
	return parquetReader{Reader: r}, nil
}

// localParquetConfig is the Parquet reader's config for the local file at
// path: its counts kept where a CTF file's index would be, with
// cfg.CacheIndex (in cfg.CacheDir, or beside the file) or in indexDir
// (Options.IndexDir).
func localParquetConfig(path string, cfg ctf.Config, indexDir string) parquet.Config {
	if indexDir != "" {
		// A directory that cannot be made shows as the warning that the
		// counts could not be kept.
		cfg, _ = IndexCache(cfg, indexDir, path)
	}
	pcfg := ParquetConfig(cfg)
	if cfg.CacheIndex {
		pcfg.CacheDir = cfg.CacheDir
		if pcfg.CacheDir == "" {
			pcfg.CacheDir = filepath.Dir(path)
		}
		pcfg.Warn = cacheWarning(path, cfg.Warn)
	}
	return pcfg
}

// IndexCachePath is where the index cache of the local corpus at path is
// kept for cfg (read --cache-index): a CTF file's index, a Parquet file's
// counts.
func IndexCachePath(path string, cfg ctf.Config) string {
	if Detect(path) == Parquet {
		cfg.CacheIndex = true
		return parquet.CountsPath(path, localParquetConfig(path, cfg, ""))
	}
	return ctf.CachePath(path, cfg)
}

// VerifyIndexCache checks the index cache of the local corpus at path for
// cfg without using or rewriting it (ctf.VerifyCache, parquet.VerifyCounts):
// nil when it matches the file and cfg, an error for which os.IsNotExist
// is true when there is none.
func VerifyIndexCache(path string, cfg ctf.Config) error {
	if Detect(path) == Parquet {
		cfg.CacheIndex = true
		return parquet.VerifyCounts(path, localParquetConfig(path, cfg, ""))
	}
	return ctf.VerifyCache(path, cfg)
}

// cacheWarning reports a counts file's problems as a CTF reader reports
// its index cache's (ctf.ErrCache), to warn when it is set.
func cacheWarning(path string, warn func(ctf.Error)) func(string) {
	if warn == nil {
		return nil
	}
	return func(msg string) { warn(ctf.Error{File: path, Msg: msg, Err: ctf.ErrCache}) }
}

// OpenWith is Open of a local file or of an object (s3://BUCKET/KEY,
// invariant 4), with ctx stopping the index pass (and bounding the
// object's first request) and opt's settings.
func OpenWith(ctx context.Context, path string, cfg ctf.Config, opt Options) (Reader, error) {
	if IsObject(path) {
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
		return openObject(ctx, path, cfg, opt)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Detect(path), err)
	}
	r, err := OpenFile(ctx, f, path, cfg, opt)
	if err != nil {
		f.Close()
	}
	return r, err
}

// DirectAhead is how many bytes a corpus read around the page cache
// reads ahead of its parse (internal/direct).
const DirectAhead = 16 << 20

// DirectReads reports whether OpenFile (so OpenWith and serve) reads a
// local CTF corpus of size bytes around the page cache (O_DIRECT,
// internal/direct): when it is larger than the machine's memory, so that
// a sweep finds none of it cached and filling and reclaiming the page
// cache would cost more system time than the disk.
// BATCHPREP_DIRECT_READS=on or off decides instead.
func DirectReads(size int64) bool {
	switch os.Getenv("BATCHPREP_DIRECT_READS") {
	case "on":
		return true
	case "off":
		return false
	}
	mem := memTotal()
	return mem > 0 && size > mem
}

// memTotal is the machine's memory in bytes (/proc/meminfo's MemTotal;
// 0 where there is none).
func memTotal() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		var kb int64
		if n, _ := fmt.Sscanf(line, "MemTotal: %d kB", &kb); n == 1 {
			return kb << 10
		}
	}
	return 0
}

// OpenFile is Open of a file the caller opened and checked already: f is
// what is read (path names it in messages), its format is told from its
// first bytes or path's name, the index pass stops once ctx is done, and
// opt's Progress and IndexDir apply (its Objects do not). A CTF file (an
// *os.File) for which DirectReads holds is read around the page cache. On
// success the Reader owns f; on error the caller does.
func OpenFile(ctx context.Context, f corpus.Blob, path string, cfg ctf.Config, opt Options) (Reader, error) {
	if DetectBlob(f, path) == Parquet {
		r, err := parquet.OpenFile(ctx, f, path, localParquetConfig(path, cfg, opt.IndexDir))
		if err != nil {
			return nil, err
		}
		return parquetReader{Reader: r}, nil
	}
	if opt.IndexDir != "" {
		// A directory that cannot be made shows as the reader's
		// diagnostic that the index cache could not be written.
		cfg, _ = IndexCache(cfg, opt.IndexDir, path)
	}
	var blob corpus.Blob = f
	if osf, ok := f.(*os.File); ok {
		if info, err := osf.Stat(); err == nil && info.Mode().IsRegular() && DirectReads(info.Size()) {
			if d, err := direct.Open(osf, DirectAhead); err == nil {
				blob = d // else the file system refuses direct reads: the page cache
			}
		}
	}
	r, err := ctf.OpenContext(ctx, path, cfg, ctf.OpenOptions{File: blob, Progress: opt.Progress})
	if err != nil {
		if d, ok := blob.(*direct.File); ok {
			d.Detach() // f is the caller's again
		}
		return nil, err
	}
	return ctfReader{Reader: r}, nil
}

// ctfReader adds Session to a ctf.Reader, and the object it reads, if
// any (ObjectStats).
type ctfReader struct {
	*ctf.Reader
	obj *objstore.Object
}

func (c ctfReader) Session(maxErrors int, warn func(ctf.Error)) (corpus.Source, error) {
	return c.NewSession(maxErrors, warn)
}

// ParquetConfig is the Parquet reader's part of a CTF configuration.
func ParquetConfig(cfg ctf.Config) parquet.Config {
	return parquet.Config{Streams: cfg.Streams, DefinesMBSize: cfg.DefinesMBSize, Label: cfg.Label,
		ChunkBytes: cfg.ChunkBytes, ChunkSequences: cfg.ChunkSequences}
}

// parquetReader adds a Summary to a parquet.Reader, and the object it
// reads, if any (ObjectStats).
type parquetReader struct {
	*parquet.Reader
	obj *objstore.Object
}

func (p parquetReader) Session(int, func(ctf.Error)) (corpus.Source, error) { return p.Reader, nil }

func (p parquetReader) Summary() ctf.Summary {
	return ctf.Summary{Sequences: p.Layout().NumSequences(), Chunks: p.Layout().NumChunks(),
		Samples: p.StreamSamples(), Skipped: map[string]int{}, Warnings: map[string]int{}, FromCache: p.FromCounts()}
}

// ParquetOf returns the Parquet reader behind r, if r reads Parquet.
func ParquetOf(r Reader) (*parquet.Reader, bool) {
	p, ok := r.(parquetReader)
	return p.Reader, ok
}
