package objstore

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/batchprep/batchprep/internal/miniotest"
)

// rangeGetter reads bytes [off, off+len(buf)) of the benchmark object into
// buf with one ranged GET naming etag.
type rangeGetter func(ctx context.Context, off int64, buf []byte) error

// benchClients are the client libraries BenchmarkRangedGet compares; each
// entry makes a getter for a server.
var benchClients = map[string]func(b *testing.B, s *miniotest.Server, etag string) rangeGetter{
	"awssdk": awsGetter,
}

const benchObjectBytes = 72 << 20

// BenchmarkRangedGet times ranged GETs of 1 MiB and 8 MiB from a MinIO on
// loopback, one at a time and 8 at once, for each client library:
//
//	go test -run '^$' -bench RangedGet -benchtime 40x -count 3 ./internal/objstore
func BenchmarkRangedGet(b *testing.B) {
	s := miniotest.Start(b)
	s.MakeBucket(testBucket)
	etag := s.Put(testBucket, testKey, randomBytes(benchObjectBytes, 7))
	miniotest.SetEnv(b, s.Env())
	for _, name := range []string{"awssdk"} {
		mk := benchClients[name]
		if mk == nil {
			continue
		}
		get := mk(b, s, etag)
		for _, size := range []int{1 << 20, 8 << 20} {
			for _, conc := range []int{1, 8} {
				b.Run(fmt.Sprintf("%s/%dMiB/conc%d", name, size>>20, conc), func(b *testing.B) {
					benchGets(b, get, size, conc)
				})
			}
		}
	}
}

// benchGets runs b.N rounds of conc concurrent GETs of size bytes at
// spread-out offsets.
func benchGets(b *testing.B, get rangeGetter, size, conc int) {
	bufs := make([][]byte, conc)
	for i := range bufs {
		bufs[i] = make([]byte, size)
	}
	b.SetBytes(int64(size * conc))
	b.ResetTimer()
	for i := range b.N {
		var wg sync.WaitGroup
		for c := range conc {
			off := int64((i*conc+c)*size) % int64(benchObjectBytes-size)
			wg.Go(func() {
				if err := get(context.Background(), off, bufs[c]); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
}

// awsGetter reads with the AWS SDK client objstore uses.
func awsGetter(b *testing.B, s *miniotest.Server, etag string) rangeGetter {
	c, err := newClient(context.Background(), Options{FetchConcurrency: 8})
	if err != nil {
		b.Fatal(err)
	}
	return func(ctx context.Context, off int64, buf []byte) error {
		out, err := c.s3.GetObject(ctx, &s3.GetObjectInput{
			Bucket: aws.String(testBucket), Key: aws.String(testKey), IfMatch: &etag,
			Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, off+int64(len(buf))-1)),
		})
		if err != nil {
			return err
		}
		defer out.Body.Close()
		_, err = io.ReadFull(out.Body, buf)
		return err
	}
}

// BenchmarkOpen times Open (the client, the cache directory, a HEAD) and
// Close of one object on a MinIO on loopback: "shared" as Open does it,
// "fresh" with the process's clients forgotten before every Open (a
// client, its configuration and its connections made per object):
//
//	go test -run '^$' -bench 'Open$' -count 6 ./internal/objstore
func BenchmarkOpen(b *testing.B) {
	s := miniotest.Start(b)
	s.MakeBucket(testBucket)
	s.Put(testBucket, testKey, randomBytes(1<<10, 1))
	miniotest.SetEnv(b, s.Env())
	opt := Options{CacheDir: b.TempDir()}
	for _, fresh := range []bool{false, true} {
		name := "shared"
		if fresh {
			name = "fresh"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if fresh {
					clients.Lock()
					clear(clients.m)
					clients.Unlock()
				}
				o, err := Open(context.Background(), testURL, opt)
				if err != nil {
					b.Fatal(err)
				}
				o.Close()
			}
		})
	}
}
