package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/internal/objstore"
)

// What read does for corpora in object storage beyond opening them.

// publishIndexes puts the index of each object among readers beside it
// (file.PublishIndex) and says so on stderr. Objects with no index to
// publish are passed over, unless no object has one.
func publishIndexes(env *Env, f *readFlags, srcCfg source.Config, readers []file.Reader) error {
	var none error
	published := 0
	for _, r := range readers {
		if !file.IsObject(r.Path()) {
			continue
		}
		url, err := file.PublishIndex(env.Ctx, r, f.objectOptions(srcCfg))
		if errors.Is(err, file.ErrNotPublishable) {
			none = err
			continue
		}
		if err != nil {
			return fmt.Errorf("--publish-index: %w", err)
		}
		published++
		fmt.Fprintf(env.Stderr, "batchprep read: published the index of %s as %s\n", r.Path(), url)
	}
	if published == 0 && none != nil {
		return fmt.Errorf("--publish-index: %w", none)
	}
	return nil
}

// objectOptions are the object flags' options for a read with srcCfg: a
// rank that reads only its own chunks fetches only their bytes
// (objstore.Options.Exact).
func (f *readFlags) objectOptions(srcCfg source.Config) objstore.Options {
	o := *f.objects
	o.Exact = srcCfg.SplitsChunks()
	return o
}

// writeObjectTotals writes the summary's lines for the objects among
// readers, summed over them: the GET requests sent (retries included), the
// bytes they brought, the bytes read from the local cache instead, the
// retries and the damaged cache files found (removed and fetched again).
// Nothing is written when every corpus is a local file.
func writeObjectTotals(w io.Writer, readers []file.Reader) {
	var t objstore.Stats
	objects := 0
	for _, r := range readers {
		if s, ok := file.ObjectStats(r); ok {
			objects++
			t.Gets += s.Gets
			t.BytesFetched += s.BytesFetched
			t.BytesFromCache += s.BytesFromCache
			t.Retries += s.Retries
			t.CacheBad += s.CacheBad
		}
	}
	if objects == 0 {
		return
	}
	fmt.Fprintf(w, "object GETs: %d\nobject bytes fetched: %d\nobject bytes from cache: %d\nobject retries: %d\nobject bad cache files: %d\n",
		t.Gets, t.BytesFetched, t.BytesFromCache, t.Retries, t.CacheBad)
}
