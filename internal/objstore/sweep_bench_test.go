package objstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/batchprep/batchprep/internal/miniotest"
)

// BenchmarkColdSweep reads a 64 MiB object once in 1 MiB chunks through an
// empty cache, every chunk prefetched first (as a reader entering a window
// does), behind a proxy that adds a delay to every request, for several
// FetchConcurrency values:
//
//	go test -run '^$' -bench ColdSweep -benchtime 3x ./internal/objstore
func BenchmarkColdSweep(b *testing.B) {
	const size, chunk = 64 << 20, 1 << 20
	s := miniotest.Start(b)
	s.MakeBucket(testBucket)
	s.Put(testBucket, testKey, randomBytes(size, 5))
	p := s.ProxyFor(b)
	miniotest.SetEnv(b, p.Env(b, s))
	for _, delay := range []time.Duration{0, 20 * time.Millisecond} {
		p.SetDelay(delay)
		for _, conc := range []int{1, 4, 8, 16} {
			b.Run(fmt.Sprintf("delay%v/conc%d", delay, conc), func(b *testing.B) {
				b.SetBytes(size)
				buf := make([]byte, chunk)
				var gets int64
				for range b.N {
					o, err := Open(context.Background(), testURL, Options{CacheDir: b.TempDir(), FetchConcurrency: conc})
					if err != nil {
						b.Fatal(err)
					}
					for off := int64(0); off < size; off += chunk {
						o.Prefetch(off, chunk)
					}
					for off := int64(0); off < size; off += chunk {
						if _, err := o.ReadAt(buf, off); err != nil {
							b.Fatal(err)
						}
					}
					gets += o.Stats().Gets
					o.Close()
				}
				b.ReportMetric(float64(gets)/float64(b.N), "GETs/sweep")
			})
		}
	}
}
