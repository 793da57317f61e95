package file

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/internal/objstore"
)

// An object's index (a CTF object's index, a Parquet object's counts) may
// be published beside it, as the object named by its key and IndexSuffix
// (PublishIndex): a reader without the index in its cache then downloads
// it (about 2 % of a CTF object, 4 % of a Parquet one) instead of reading
// the whole object through an index pass, so that a rank that reads only its
// own chunks (source.Config.SplitChunks) fetches only those, even on a
// host where the object was never read.

// IndexSuffix is what a published index's key adds to its object's.
const IndexSuffix = ".batchprep-index"

// ErrNotPublishable is returned by PublishIndex for a corpus it cannot
// publish an index of: a local file, or an object whose index is not in
// the cache.
var ErrNotPublishable = errors.New("file: no index to publish")

// PublishIndex puts the index r opened with (a CTF object's index, or a
// Parquet object's counts, from the cache) beside the object, for readers
// on other hosts, and returns the URL it was put at. The index names the
// object's version (its ETag) and the reader settings it was made for: a
// reader of another version or other settings does not use it.
func PublishIndex(ctx context.Context, r Reader, opt objstore.Options) (string, error) {
	if !objstore.IsURL(r.Path()) {
		return "", fmt.Errorf("%w: %s is a local file", ErrNotPublishable, r.Path())
	}
	var local string
	switch c := r.(type) {
	case ctfReader:
		local = ctf.CachePath(c.Path(), c.Config())
	case parquetReader:
		local = c.CountsFile()
	}
	if local == "" {
		return "", fmt.Errorf("%w: %s keeps no index in the cache", ErrNotPublishable, r.Path())
	}
	if _, err := os.Stat(local); err != nil {
		return "", fmt.Errorf("%w: %s has no index in the cache (%v)", ErrNotPublishable, r.Path(), err)
	}
	url := r.Path() + IndexSuffix
	if _, err := objstore.Put(ctx, url, local, opt); err != nil {
		return "", err
	}
	return url, nil
}

// fetchPublishedIndex brings the index published beside the object url
// into the cache at local, where the object's reader looks for it, unless
// an index is there already. Nothing published (or a key the credentials
// may not see) is no news; an index verify finds made for another version
// or other settings is removed and reported (warn), and the reader indexes
// the object itself. Without verify (a Parquet object's counts, which the
// open checks as it reads them) the open reports such an index.
func fetchPublishedIndex(ctx context.Context, obj *objstore.Object, url, local string, verify func() error, warn func(ctf.Error)) {
	if _, err := os.Stat(local); err == nil {
		return
	}
	report := func(msg string) {
		if warn != nil {
			warn(ctf.Error{File: url + IndexSuffix, Msg: msg, Err: ctf.ErrCache})
		}
	}
	err := objstore.Get(ctx, url+IndexSuffix, local, obj.Options())
	switch {
	case errors.Is(err, objstore.ErrNotFound) || errors.Is(err, objstore.ErrDenied):
		return
	case err != nil:
		report(fmt.Sprintf("the published index could not be fetched (%v); indexing the object", err))
		return
	}
	if verify == nil {
		return
	}
	if err := verify(); err != nil {
		os.Remove(local)
		report("the published index is for another version of the object or other reader settings; indexing the object")
	}
}
