package cli

import (
	"errors"
	"fmt"

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
