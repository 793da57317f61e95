package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchprep/batchprep/internal/miniotest"
)

// BenchmarkReadMixOpen reads the first minibatch of a mixture of 8 Parquet
// objects in MinIO on loopback, behind 20 ms added to every request, with
// an empty cache each time: its corpora opened one at a time (the
// baseline) and at once (read's default). It reports requests per read.
func BenchmarkReadMixOpen(b *testing.B) {
	dir := b.TempDir()
	text := filepath.Join(dir, "c.ctf")
	var sb strings.Builder
	for i := range 300 {
		fmt.Fprintf(&sb, "%d |x %d %d |y 1\n%d |x 1 2\n", i, i, i%7, i)
	}
	if err := os.WriteFile(text, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	pq := filepath.Join(dir, "c.parquet")
	if code := Main([]string{"convert", text, pq, "--stream", "x:2", "--stream", "y:1"}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
		b.Fatal("convert failed")
	}
	s := miniotest.Start(b)
	s.MakeBucket("corpora")
	args := []string{"read", "--stream", "x:2", "--stream", "y:1", "--max-minibatches", "1", "--format", "summary"}
	for k := range 8 {
		s.PutFile("corpora", fmt.Sprintf("p%d.parquet", k), pq)
		args = append(args, "--mix", fmt.Sprintf("s3://corpora/p%d.parquet=1", k))
	}
	proxy := s.ProxyFor(b)
	for k, v := range proxy.Env(b, s) {
		b.Setenv(k, v)
	}
	proxy.SetDelay(20 * time.Millisecond)
	for _, c := range []struct {
		name    string
		workers int
	}{{"one-at-a-time", 1}, {"at-once", mixOpenWorkers}} {
		b.Run(c.name, func(b *testing.B) {
			defer func(w int) { mixOpenWorkers = w }(mixOpenWorkers)
			mixOpenWorkers = c.workers
			before := proxy.Requests()
			for b.Loop() {
				b.StopTimer()
				cache := b.TempDir()
				b.StartTimer()
				var errOut strings.Builder
				if code := Main(append(args, "--cache-dir", cache), strings.NewReader(""), io.Discard, &errOut); code != 0 {
					b.Fatal(errOut.String())
				}
			}
			b.ReportMetric(float64(proxy.Requests()-before)/float64(b.N), "requests/op")
		})
	}
}
