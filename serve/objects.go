package serve

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/internal/objstore"
)

// AllBuckets in Options.AllowBuckets allows every bucket the server's
// credentials reach: for a private server, whose client may read what the
// server may.
const AllBuckets = "*"

// buckets is the set of buckets whose objects requests may name
// (Options.AllowBuckets, invariant 15).
type buckets struct {
	all   bool
	names map[string]bool
}

// newBuckets checks the names: AllBuckets or bucket names valid in S3.
func newBuckets(names []string) (buckets, error) {
	b := buckets{names: map[string]bool{}}
	for _, n := range names {
		if n == AllBuckets {
			b.all = true
			continue
		}
		if _, _, err := objstore.ParseURL(objstore.Scheme + n + "/k"); err != nil {
			return b, fmt.Errorf("%q: not a bucket name (3 to 63 lower-case letters, digits, dots and hyphens), nor %q", n, AllBuckets)
		}
		b.names[n] = true
	}
	return b, nil
}

// CheckBuckets checks names as Options.AllowBuckets (a flag's value).
func CheckBuckets(names []string) error {
	_, err := newBuckets(names)
	return err
}

func (b buckets) allows(bucket string) bool { return b.all || b.names[bucket] }

// refusedObject is the one answer for an object in a bucket the server
// does not allow and one its credentials may not read, as refused is for
// paths: the client cannot tell which, nor whether the object exists.
func refusedObject(field, url string) error {
	return status.Errorf(codes.PermissionDenied,
		"%s: %q is not a readable object in the server's allowed buckets (serve --allow-bucket)", field, url)
}

// acquireObject is acquire of the object at url (s3://BUCKET/KEY): its
// bucket must be allowed; it is opened (a HEAD: its ETag and size) and
// its reader shared by the calls that name the same version of it with
// the same reader settings. With exact the object fetches only the parts of
// blocks it reads (objstore.Options.Exact); a call with exact that finds
// the reader open turns the shared CTF object's reads exact, which changes
// no byte read.
func (s *Server) acquireObject(ctx context.Context, field, url string, cfg ctf.Config, exact bool) (file.Reader, func(), error) {
	bucket, _, err := objstore.ParseURL(url)
	if err != nil {
		return nil, nil, status.Errorf(codes.InvalidArgument, "%s: %s", field, strings.TrimPrefix(err.Error(), "objstore: "))
	}
	if !s.buckets.allows(bucket) {
		return nil, nil, refusedObject(field, url)
	}
	opt := s.opts.Objects
	opt.Exact = exact
	obj, err := objstore.Open(ctx, url, opt)
	if err != nil {
		return s.acquired(ctx, field, url, nil, nil, err)
	}
	b := objectBlob(obj, url)
	b.exact = exact
	r, release, err := s.readers.acquire(ctx, b, cfg)
	return s.acquired(ctx, field, url, r, release, err)
}

// objectStatus is the status a client gets for an error of the object
// store: by its kind, naming the field and the URL as the client gave it,
// never the store's text (which names where the server's credentials
// come from) nor a path of the server's.
func objectStatus(field, url string, err *objstore.Error) error {
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		return status.Errorf(codes.NotFound, "%s: %q: no such object in the server's allowed buckets", field, url)
	case errors.Is(err, objstore.ErrDenied):
		return refusedObject(field, url)
	case errors.Is(err, objstore.ErrReplaced):
		return status.Errorf(codes.Aborted, "%s: %q was replaced while it was read; ask again (from the last state received) to read the new version", field, url)
	case errors.Is(err, objstore.ErrTimeout):
		return status.Errorf(codes.Unavailable, "%s: %q: the object store did not answer within the server's --fetch-timeout; try again", field, url)
	}
	return status.Errorf(codes.Unavailable, "%s: %q: the object cannot be read now (the server's log has the details)", field, url)
}

// corpusWarn passes on to a call the diagnostics of the data of its
// corpus at path (a local file, or the object at a URL; they name it) and
// sends those of the server's index cache to the server's log: they name
// the cache's files (a stale index, after the corpus changed).
func (s *Server) corpusWarn(field, path string, warn func(ctf.Error)) func(ctf.Error) {
	object := objstore.IsURL(path)
	return func(e ctf.Error) {
		if errors.Is(e.Err, ctf.ErrCache) || object && e.File != path {
			s.opts.Logf("%s %q: %v", field, path, &e)
			return
		}
		warn(e)
	}
}

// namesPath reports whether msg, an error about the object at url, holds
// a path besides the URL (one of the server's cache, say).
func namesPath(msg, url string) bool {
	return strings.Contains(strings.ReplaceAll(msg, url, ""), "/")
}
