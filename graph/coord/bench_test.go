package coord

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// BenchmarkClaim8 measures the scheduler's overhead per bucket with 8
// trainers on a 16x16 grid (8 trainers are as many as 16 partitions can
// keep busy: every free trainer races for the few buckets whose two
// partitions are free) and on a 32x32 grid, against a real etcd on
// loopback: each trainer claims and commits at once (no training), so they
// contend as hard as they can; and, on 16x16, with 10 ms of "training" per
// bucket. Reported: p50/p99 of a claim (reading the pass and the claim
// transaction, retries included, waits for a free bucket excluded) and of
// a commit, in ms; and, as a baseline from the same run, p50/p99 of a
// single etcd Put from 8 goroutines.
//
//	go test -run '^$' -bench Claim8 -benchtime 3000x ./graph/coord
func BenchmarkClaim8(b *testing.B) {
	for _, c := range []struct {
		p       int
		work    time.Duration
		noFsync bool
	}{{16, 0, false}, {16, 0, true}, {32, 0, false}, {16, 10 * time.Millisecond, false}, {16, 10 * time.Millisecond, true}} {
		name := fmt.Sprintf("P=%d/work=%v", c.p, c.work)
		if c.noFsync {
			name += "/nofsync"
		}
		b.Run(name, func(b *testing.B) { benchClaims(b, c.p, c.work, c.noFsync) })
	}
}

func benchClaims(b *testing.B, p int, work time.Duration, noFsync bool) {
	s, err := Serve(ServerOptions{Dir: filepath.Join(b.TempDir(), "etcd"), Fast: true, NoFsync: noFsync})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	srv := s
	const w = 8
	ctx := context.Background()
	clients := make([]*clientv3.Client, w)
	for i := range clients {
		c, err := newClient(srv.Endpoint())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		clients[i] = c
	}
	// Baseline: plain Puts, 8 at a time.
	var mu sync.Mutex
	var puts []time.Duration
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			for j := 0; j < 200; j++ {
				t0 := time.Now()
				if _, err := clients[i].Put(ctx, fmt.Sprintf("/bench/put/%d", i), "x"); err != nil {
					b.Error(err)
					return
				}
				d := time.Since(t0)
				mu.Lock()
				puts = append(puts, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	passes := (b.N + p*p - 1) / (p * p)
	var claims, commits []time.Duration
	retries := 0
	b.ResetTimer()
	for i := range clients {
		wg.Go(func() {
			tr, err := Join(ctx, clients[i], Options{Run: fmt.Sprintf("bench-%d", b.N), Rank: i, World: w, L: p, R: p, Passes: passes})
			if err != nil {
				b.Error(err)
				return
			}
			for {
				cl, err := tr.Next(ctx)
				if errors.Is(err, ErrDone) {
					tr.Close(ctx)
					return
				}
				if err != nil {
					b.Error(err)
					return
				}
				time.Sleep(work)
				t0 := time.Now()
				if err := tr.Commit(ctx, cl); err != nil {
					b.Error(err)
					return
				}
				d := time.Since(t0)
				mu.Lock()
				claims, commits = append(claims, cl.Overhead), append(commits, d)
				retries += cl.Retries
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(pct(claims, 50), "claim-p50-ms")
	b.ReportMetric(pct(claims, 99), "claim-p99-ms")
	b.ReportMetric(pct(commits, 99), "commit-p99-ms")
	b.ReportMetric(float64(retries)/float64(max(len(claims), 1)), "retries/claim")
	b.ReportMetric(pct(puts, 50), "put-p50-ms")
	b.ReportMetric(pct(puts, 99), "put-p99-ms")
}

func pct(d []time.Duration, q int) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[min(len(s)-1, len(s)*q/100)]) / float64(time.Millisecond)
}
