package objstore

import (
	"io/fs"
	"path"
	"time"
)

// The methods below make an Object a corpus.Blob (with corpus.Versioned,
// corpus.Hinter and corpus.ParallelStreamer), so the corpus readers read it
// as they read a local file.

// Stat describes the object as a regular, read-only file named by the
// last element of its key, with its size; its modification time is zero
// (the ETag identifies the version: Version).
func (o *Object) Stat() (fs.FileInfo, error) { return objectInfo{o}, nil }

// Version is the object's ETag at Open.
func (o *Object) Version() string { return o.etag }

// Hint is Prefetch: the range is fetched into the cache in the background.
func (o *Object) Hint(off, n int64) { o.Prefetch(off, n) }

// Streams is how many streams (NewRangeReader) a pass over the whole object
// runs at once: FetchConcurrency, as many as its ranged GETs. A store caps
// each connection well below what several reach together.
func (o *Object) Streams() int { return o.opt.FetchConcurrency }

// CacheDir is the cache directory the Object uses (the default resolved).
func (o *Object) CacheDir() string { return o.opt.CacheDir }

// Options are the options the Object was opened with (defaults resolved).
func (o *Object) Options() Options { return o.opt }

type objectInfo struct{ o *Object }

func (i objectInfo) Name() string       { return path.Base(i.o.key) }
func (i objectInfo) Size() int64        { return i.o.size }
func (i objectInfo) Mode() fs.FileMode  { return 0o444 }
func (i objectInfo) ModTime() time.Time { return time.Time{} }
func (i objectInfo) IsDir() bool        { return false }
func (i objectInfo) Sys() any           { return nil }
