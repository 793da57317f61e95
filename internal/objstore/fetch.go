package objstore

import (
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// fetch GETs bytes [off, off+n) with If-Match set to the ETag seen at open
// (invariant 3), retrying transient errors; a body cut short is fetched
// again from where it stopped, so the result is what an undisturbed read
// returns (invariant 4). The caller holds a slot of o.sem.
func (o *Object) fetch(ctx context.Context, off, n int64) ([]byte, error) {
	buf := make([]byte, n)
	var got int64
	op := fmt.Sprintf("read bytes %d-%d", off, off+n-1)
	err := o.retry(ctx, op, func(ctx context.Context) error {
		o.stats.gets.Add(1)
		out, err := o.c.s3.GetObject(ctx, &s3.GetObjectInput{
			Bucket:  &o.bucket,
			Key:     &o.key,
			Range:   aws.String(fmt.Sprintf("bytes=%d-%d", off+got, off+n-1)),
			IfMatch: &o.etag,
		})
		if err != nil {
			return err
		}
		defer out.Body.Close()
		if l := aws.ToInt64(out.ContentLength); out.ContentLength != nil && l != n-got {
			return fmt.Errorf("objstore: the server sent %d bytes for a range of %d", l, n-got)
		}
		k, err := io.ReadFull(out.Body, buf[got:])
		got += int64(k)
		o.stats.fetched.Add(int64(k))
		return err
	})
	if err != nil {
		return nil, err
	}
	return buf, nil
}
