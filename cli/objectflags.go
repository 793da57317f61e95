package cli

import (
	"flag"
	"fmt"

	"github.com/batchprep/batchprep/internal/objstore"
)

// objectFlags registers the flags of reads from object storage (a corpus
// named s3://BUCKET/KEY; docs/object-storage.md) and returns the options
// they set. The defaults are objstore's; retries are reported on env's
// stderr as they start (objstore.Options.Warn).
func objectFlags(fs *flag.FlagSet, env *Env) *objstore.Options {
	o := &objstore.Options{FetchConcurrency: objstore.DefaultFetchConcurrency, FetchTimeout: objstore.DefaultFetchTimeout,
		CacheBytes: objstore.DefaultCacheBytes, Warn: func(msg string) { fmt.Fprintf(env.Stderr, "batchprep: %s\n", msg) }}
	fs.IntVar(&o.FetchConcurrency, "fetch-concurrency", o.FetchConcurrency, "s3:// corpora: ranged GETs in flight per object")
	fs.DurationVar(&o.FetchTimeout, "fetch-timeout", o.FetchTimeout, "s3:// corpora: how long a request is retried after transient errors")
	fs.StringVar(&o.CacheDir, "cache-dir", "", "s3:// corpora: the local cache `DIR` (default: batchprep/objects in the user's cache directory)")
	fs.Var((*byteSize)(&o.CacheBytes), "cache-bytes", "s3:// corpora: bound on the cache directory's `size`; least recently used blocks leave first")
	return o
}
