package cli

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/batchprep/batchprep/internal/objstore"
)

// objectFlags registers the flags of reads from object storage (a corpus
// named s3://BUCKET/KEY; docs/object-storage.md) and returns the options
// they set. The defaults are objstore's; retries are reported on env's
// stderr as they start (objstore.Options.Warn).
func objectFlags(fs *flag.FlagSet, env *Env) *objstore.Options {
	o := &objstore.Options{FetchConcurrency: objstore.DefaultFetchConcurrency, FetchTimeout: objstore.DefaultFetchTimeout,
		CacheBytes: objstore.DefaultCacheBytes, Warn: func(msg string) { fmt.Fprintf(env.Stderr, "batchprep: %s\n", msg) }}
	fs.Var((*atLeastOne)(&o.FetchConcurrency), "fetch-concurrency", "s3:// corpora: ranged GETs in flight per object, and the streams of a CTF index pass (`int`, at least 1)")
	fs.Var((*positiveDuration)(&o.FetchTimeout), "fetch-timeout", "s3:// corpora: how long (a `duration`) a request is retried after transient errors")
	fs.StringVar(&o.CacheDir, "cache-dir", "", "s3:// corpora: the local cache `DIR` (default: batchprep/objects in the user's cache directory)")
	fs.Var((*positiveSize)(&o.CacheBytes), "cache-bytes", "s3:// corpora: bound on the cache directory's `size`; least recently used blocks leave first")
	return o
}

// The object flags refuse a value of 0 or less when they are set: objstore
// reads 0 as "the default", but a flag shows its default, and a user who
// writes --fetch-concurrency 0 means something else.

// atLeastOne is an int flag of at least 1.
type atLeastOne int

func (n *atLeastOne) String() string { return strconv.Itoa(int(*n)) }
func (n *atLeastOne) Get() any       { return int(*n) }
func (n *atLeastOne) Set(v string) error {
	k, err := strconv.ParseInt(v, 10, strconv.IntSize)
	switch {
	case err != nil:
		return errors.New("want a whole number of at least 1")
	case k < 1:
		return errors.New("must be at least 1")
	}
	*n = atLeastOne(k)
	return nil
}

// positiveDuration is a duration flag greater than 0.
type positiveDuration time.Duration

func (d *positiveDuration) String() string { return time.Duration(*d).String() }
func (d *positiveDuration) Get() any       { return time.Duration(*d) }
func (d *positiveDuration) Set(v string) error {
	k, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return errors.New("want a duration such as 90s or 2m")
	case k <= 0:
		return errors.New("must be positive")
	}
	*d = positiveDuration(k)
	return nil
}

// positiveSize is a byte-count flag (byteSize) greater than 0.
type positiveSize int64

func (b *positiveSize) String() string { return formatSize(int64(*b)) }
func (b *positiveSize) Get() any       { return int64(*b) }
func (b *positiveSize) Set(v string) error {
	n, err := parseSize(v)
	switch {
	case err != nil:
		return err
	case n <= 0:
		return errors.New("must be positive")
	}
	*b = positiveSize(n)
	return nil
}
