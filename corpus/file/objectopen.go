package file

import (
	"context"

	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/internal/objstore"
)

// OpenObject is OpenWith of an object the caller opened already (a server
// that keys its readers by the object's ETag and size before indexing):
// obj is what is read, url names it in messages, and a CTF object's index
// is cached as OpenWith caches it (invariant 4). opt.Objects is not used
// (obj has its options). On success the Reader owns obj; on error the
// caller does.
func OpenObject(ctx context.Context, obj *objstore.Object, url string, cfg ctf.Config, opt Options) (Reader, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return openObjectReader(ctx, obj, obj, url, cfg, opt)
}

// OpenSharedObject is OpenObject of an object the caller keeps: the Reader
// reads obj (the version it saw at open) and leaves it open when closed,
// so that a command can open an object once for everything it does with
// it. The caller closes obj after the Reader.
func OpenSharedObject(ctx context.Context, obj *objstore.Object, cfg ctf.Config, opt Options) (Reader, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return openObjectReader(ctx, obj, objstore.Kept{Object: obj}, obj.URL(), cfg, opt)
}
