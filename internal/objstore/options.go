package objstore

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Defaults of Options; a zero field means its default.
const (
	// DefaultFetchConcurrency is the bound on GETs in flight per Object.
	DefaultFetchConcurrency = 8
	// DefaultFetchTimeout is how long one range is retried, counted from
	// its first attempt.
	DefaultFetchTimeout = 2 * time.Minute
	// DefaultCacheBytes bounds the cache directory: 10 GiB.
	DefaultCacheBytes = 10 << 30
)

// blockSize is the unit the cache stores: an object is cut into blocks of
// this many bytes (the last may be shorter). A read fetches the blocks it
// touches that are not cached, in one GET.
const blockSize = 1 << 20

// Options configure Open. The zero value means every default.
type Options struct {
	// FetchConcurrency bounds the ranged GETs in flight per Object
	// (reads and prefetches together). Default 8.
	FetchConcurrency int
	// FetchTimeout is how long a GET is retried after transient errors,
	// counted from its first attempt. Default 2 minutes.
	FetchTimeout time.Duration
	// CacheDir holds the local cache. Default: "batchprep/objects" under
	// os.UserCacheDir (~/.cache/batchprep/objects on Linux).
	CacheDir string
	// CacheBytes bounds the total size of the files in CacheDir: least
	// recently used ones are removed past it. Default 10 GiB.
	CacheBytes int64
	// Warn, if set, is told when requests start failing and are being
	// retried (the error, what is retried, until when), at most once per
	// warnEvery per Object: a stalled run is not silent for up to
	// FetchTimeout. It may be called from several goroutines.
	Warn func(msg string)
	// Exact makes a read fetch only the bytes it needs of a block that is
	// neither cached nor on its way, instead of the whole block, and cache
	// them as a file of their own (invariant 12): for readers of ranges far
	// apart, such as a rank that loads only its own chunks. Whole blocks
	// are fetched and cached as blocks either way.
	Exact bool

	// blockSize overrides the package's block size (tests use small
	// blocks to keep their data small).
	blockSize int64
}

// Validate reports the first field that has no meaning (negative values).
// Zero values are fine: they mean the default.
func (o Options) Validate() error {
	switch {
	case o.FetchConcurrency < 0:
		return fmt.Errorf("objstore: fetch-concurrency %d: must be at least 1 (0 means the default, %d)", o.FetchConcurrency, DefaultFetchConcurrency)
	case o.FetchTimeout < 0:
		return fmt.Errorf("objstore: fetch-timeout %v: must be positive (0 means the default, %v)", o.FetchTimeout, DefaultFetchTimeout)
	case o.CacheBytes < 0:
		return fmt.Errorf("objstore: cache-bytes %d: must be positive (0 means the default, %d)", o.CacheBytes, int64(DefaultCacheBytes))
	case o.blockSize < 0:
		return fmt.Errorf("objstore: block size %d: must be positive", o.blockSize)
	}
	return nil
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() (Options, error) {
	if err := o.Validate(); err != nil {
		return o, err
	}
	if o.FetchConcurrency == 0 {
		o.FetchConcurrency = DefaultFetchConcurrency
	}
	if o.FetchTimeout == 0 {
		o.FetchTimeout = DefaultFetchTimeout
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.blockSize == 0 {
		o.blockSize = blockSize
	}
	dir, err := o.Dir()
	if err != nil {
		return o, err
	}
	o.CacheDir = dir
	return o, nil
}

// Dir is the cache directory: CacheDir, or its default when it is empty.
func (o Options) Dir() (string, error) {
	if o.CacheDir != "" {
		return o.CacheDir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("objstore: no cache-dir given and no user cache directory: %w", err)
	}
	return filepath.Join(dir, "batchprep", "objects"), nil
}

// String shows the options as flags would set them.
func (o Options) String() string {
	return fmt.Sprintf("fetch-concurrency=%d fetch-timeout=%v cache-dir=%q cache-bytes=%d",
		o.FetchConcurrency, o.FetchTimeout, o.CacheDir, o.CacheBytes)
}
