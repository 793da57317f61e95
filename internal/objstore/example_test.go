package objstore_test

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/batchprep/batchprep/internal/objstore"
)

// Open an object, hint the ranges about to be read, and read one of them.
// The store and credentials come from the AWS environment (for MinIO:
// AWS_ENDPOINT_URL=http://127.0.0.1:9000, AWS_ACCESS_KEY_ID, ...).
func ExampleOpen() {
	ctx := context.Background()
	o, err := objstore.Open(ctx, "s3://corpora/atis.ctf", objstore.Options{FetchConcurrency: 8})
	if err != nil {
		log.Fatal(err) // names the bucket, the key and the credentials' source
	}
	defer o.Close()
	const chunk = 1 << 20
	for off := int64(0); off < 4*chunk; off += chunk {
		o.Prefetch(off, chunk) // in the background, 8 GETs at most
	}
	buf := make([]byte, chunk)
	if _, err := o.ReadAt(buf, chunk); err != nil && err != io.EOF {
		log.Fatal(err) // objstore.ErrReplaced if the object changed since Open
	}
	fmt.Println(o.Size(), o.ETag(), o.Stats().Gets)
}
