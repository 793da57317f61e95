package file

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/internal/objstore"
)

// A CTF object's index may be published beside it, as the object named by
// its key and IndexSuffix (PublishIndex): a reader without the index in its
// cache then downloads it (about 2 % of the text) instead of streaming the
// whole object through an index pass, so that a rank that reads only its
// own chunks (source.Config.SplitChunks) fetches only those, even on a
// host where the object was never read.

// IndexSuffix is what a published index's key adds to its object's.
const IndexSuffix = ".batchprep-index"

// ErrNotPublishable is returned by PublishIndex for a corpus it cannot
// publish an index of: a local file, a Parquet corpus (its footer is its
// index), or a CTF object whose index is not in the cache.
var ErrNotPublishable = errors.New("file: no index to publish")

// PublishIndex puts the index r opened with (a CTF object's, from the
// cache) beside the object, for readers on other hosts, and returns the
// URL it was put at. The index names the object's version (its ETag) and
// the reader settings it was made for: a reader of another version or
// other settings does not use it.
func PublishIndex(ctx context.Context, r Reader, opt objstore.Options) (string, error) {
	c, ok := r.(ctfReader)
	switch {
	case !objstore.IsURL(r.Path()):
		return "", fmt.Errorf("%w: %s is a local file", ErrNotPublishable, r.Path())
	case !ok:
		return "", fmt.Errorf("%w: %s is a Parquet corpus, whose footer is its index", ErrNotPublishable, r.Path())
	}
	local := ctf.CachePath(c.Path(), c.Config())
	if _, err := os.Stat(local); err != nil {
		return "", fmt.Errorf("%w: %s has no index in the cache (%v)", ErrNotPublishable, c.Path(), err)
	}
	url := c.Path() + IndexSuffix
	if _, err := objstore.Put(ctx, url, local, opt); err != nil {
		return "", err
	}
	return url, nil
}

// fetchPublishedIndex brings the index published beside the CTF object
// url into the cache, where cfg's reader looks for it, unless an index is
// there already. Nothing published (or a key the credentials may not see)
// is no news; an index for another version or other settings is removed
// and reported (cfg.Warn), and the reader indexes the object itself.
func fetchPublishedIndex(ctx context.Context, obj *objstore.Object, blob corpus.Blob, url string, cfg ctf.Config) {
	local := ctf.CachePath(url, cfg)
	if _, err := os.Stat(local); err == nil {
		return
	}
	warn := func(msg string) {
		if cfg.Warn != nil {
			cfg.Warn(ctf.Error{File: url + IndexSuffix, Msg: msg, Err: ctf.ErrCache})
		}
	}
	err := objstore.Get(ctx, url+IndexSuffix, local, obj.Options())
	switch {
	case errors.Is(err, objstore.ErrNotFound) || errors.Is(err, objstore.ErrDenied):
		return
	case err != nil:
		warn(fmt.Sprintf("the published index could not be fetched (%v); indexing the object", err))
		return
	}
	if err := ctf.VerifyCacheOf(blob, url, cfg); err != nil {
		os.Remove(local)
		warn("the published index is for another version of the object or other reader settings; indexing the object")
	}
}
