package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/batchprep/batchprep/internal/atomicfile"
)

// MaxPutBytes is the largest file Put uploads: S3's limit on one PUT
// request (5 GiB). Larger objects need a multipart upload.
const MaxPutBytes = 5 << 30

// Put uploads the local file at path as the object at url in one PUT
// request and returns the new object's ETag (invariant 11). Transient
// failures are retried from the file's start while opt.FetchTimeout has
// not passed (invariant 4); the cache options are not used. S3 stores a
// PUT whole or not at all, so a failed Put leaves the old object, if any.
func Put(ctx context.Context, url, path string, opt Options) (etag string, err error) {
	bucket, key, err := ParseURL(url)
	if err != nil {
		return "", err
	}
	if err := opt.Validate(); err != nil {
		return "", err
	}
	if opt.FetchTimeout == 0 {
		opt.FetchTimeout = DefaultFetchTimeout
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("objstore: %s: put: %w", url, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("objstore: %s: put: %w", url, err)
	}
	size := fi.Size()
	if size > MaxPutBytes {
		return "", &Error{URL: url, Op: "put", Msg: fmt.Sprintf("%s is %d bytes, over the %d one PUT request can store", path, size, int64(MaxPutBytes))}
	}
	c, err := sharedClient(ctx, opt)
	if err != nil {
		return "", err
	}
	o := &Object{url: url, bucket: bucket, key: key, opt: opt, c: c, jit: newJitter()}
	err = o.retry(ctx, "put", func(ctx context.Context) error {
		out, err := c.s3.PutObject(ctx, &s3.PutObjectInput{
			Bucket: &bucket, Key: &key, Body: io.NewSectionReader(f, 0, size), ContentLength: aws.Int64(size),
		})
		if err == nil {
			etag = aws.ToString(out.ETag)
		}
		return err
	})
	var e *Error
	if errors.As(err, &e) && e.Kind == ErrNotFound {
		e.Msg = fmt.Sprintf("no such bucket %q to put key %q in (credentials: %s)", bucket, key, c.source)
	}
	return etag, err
}

// Get downloads the object at url into the local file path with one GET
// request (invariant 11), no HEAD before it: atomically, so that path holds
// the whole object or what it held before, never a part. A transient
// failure starts the GET again, as in invariant 4; the object does not go
// through the cache. A missing object is an error that unwraps to
// ErrNotFound (to ErrDenied where the credentials may not list the
// bucket, as S3 answers then).
func Get(ctx context.Context, url, path string, opt Options) error {
	bucket, key, err := ParseURL(url)
	if err != nil {
		return err
	}
	if err := opt.Validate(); err != nil {
		return err
	}
	if opt.FetchTimeout == 0 {
		opt.FetchTimeout = DefaultFetchTimeout
	}
	c, err := sharedClient(ctx, opt)
	if err != nil {
		return err
	}
	o := &Object{url: url, bucket: bucket, key: key, opt: opt, c: c, jit: newJitter()}
	return o.retry(ctx, "get", func(ctx context.Context) error {
		out, err := c.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
		if err != nil {
			return err
		}
		defer out.Body.Close()
		o.stats.gets.Add(1)
		return atomicfile.WriteFrom(path, 0o644, func(w io.Writer) error {
			n, err := io.Copy(w, out.Body)
			if err == nil && out.ContentLength != nil && n != aws.ToInt64(out.ContentLength) {
				err = fmt.Errorf("objstore: %s: the body ended after %d of %d bytes: %w", url, n, aws.ToInt64(out.ContentLength), io.ErrUnexpectedEOF)
			}
			return err
		})
	})
}
