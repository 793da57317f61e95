package coord

import (
	"context"
	"errors"
	"fmt"
	"os"
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
// bucket. Each case runs with claims made ahead in the commit transaction
// (the default) and without (ahead=off), in the same run.
//
// Reported, in ms: p50/p99 of a claim (Claim.Overhead: reading the pass
// and the claim transactions, retries included, waits for a free bucket
// excluded; for a claim made ahead, the whole commit transaction that
// made it, so that it is counted twice, in claim and in commit); p99 of a
// commit; p50/p99 of the scheduler's time per bucket (the time Next spent
// on a claim that was not made ahead, plus the commit); and, as a
// baseline from the same run, p50/p99 of a single etcd Put from 8
// goroutines. Also the lost races per claim and the share of claims made
// ahead.
//
//	go test -run '^$' -bench Claim8 -benchtime 3000x ./graph/coord
//
// With BATCHPREP_BENCH_ETCD=HOST:PORT both this benchmark and BenchmarkPut
// use that etcd instead of one started in the test process (for example
// `batchprep coordinator --data-dir DIR --listen 127.0.0.1:23790`), so that
// the server does not share the test's runtime; the nofsync cases then
// measure that server as it was started. Each case uses a run name of its
// own, and its keys are removed when its trainers sign off.
func BenchmarkClaim8(b *testing.B) {
	for _, c := range []struct {
		p       int
		work    time.Duration
		noFsync bool
	}{{16, 0, false}, {16, 0, true}, {32, 0, false}, {16, 10 * time.Millisecond, false}, {16, 10 * time.Millisecond, true}} {
		for _, ahead := range []bool{true, false} {
			name := fmt.Sprintf("P=%d/work=%v", c.p, c.work)
			if c.noFsync {
				name += "/nofsync"
			}
			if !ahead {
				name += "/ahead=off"
			}
			b.Run(name, func(b *testing.B) { benchClaims(b, c.p, c.work, c.noFsync, !ahead) })
		}
	}
}

func benchClaims(b *testing.B, p int, work time.Duration, noFsync, noAhead bool) {
	srv := benchServer(b, noFsync)
	run := fmt.Sprintf("bench-%d-%d", b.N, time.Now().UnixNano()) // unique on a shared etcd
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
	puts := timePuts(b, clients, 200*len(clients), 0)
	var mu sync.Mutex
	var wg sync.WaitGroup
	passes := (b.N + p*p - 1) / (p * p)
	var claims, commits, buckets []time.Duration
	retries, ahead := 0, 0
	b.ResetTimer()
	for i := range clients {
		wg.Go(func() {
			tr, err := Join(ctx, clients[i], Options{Run: run, Rank: i, World: w, L: p, R: p, Passes: passes, NoClaimAhead: noAhead})
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
				next := cl.Overhead
				if cl.Ahead {
					next = 0 // counted in the previous commit
				}
				mu.Lock()
				claims, commits, buckets = append(claims, cl.Overhead), append(commits, d), append(buckets, next+d)
				retries += cl.Retries
				if cl.Ahead {
					ahead++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(pct(claims, 50), "claim-p50-ms")
	b.ReportMetric(pct(claims, 99), "claim-p99-ms")
	b.ReportMetric(pct(commits, 99), "commit-p99-ms")
	b.ReportMetric(pct(buckets, 50), "bucket-p50-ms")
	b.ReportMetric(pct(buckets, 99), "bucket-p99-ms")
	b.ReportMetric(float64(retries)/float64(max(len(claims), 1)), "retries/claim")
	b.ReportMetric(float64(ahead)/float64(max(len(claims), 1)), "ahead/claim")
	b.ReportMetric(pct(puts, 50), "put-p50-ms")
	b.ReportMetric(pct(puts, 99), "put-p99-ms")
}

// timePuts runs n Puts from the clients at once (client i puts keys of its
// own), each client waiting gap before each of its Puts, and returns every
// Put's latency.
func timePuts(b *testing.B, clients []*clientv3.Client, n int, gap time.Duration) []time.Duration {
	var mu sync.Mutex
	var puts []time.Duration
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			for j := i; j < n; j += len(clients) {
				time.Sleep(gap)
				t0 := time.Now()
				if _, err := c.Put(context.Background(), fmt.Sprintf("/bench/put/%d", i), "x"); err != nil {
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
	return puts
}

// pct is the q-th percentile of d in ms.
func pct(d []time.Duration, q float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(float64(len(s))*q/100))]) / float64(time.Millisecond)
}

// BenchmarkPut is the floor under any claim: a claim is at least one etcd
// write transaction, so its latency cannot be below a plain Put's on the
// same server. w goroutines (one client each) put in a loop, each waiting
// gap between its puts (a trainer between two claims); reported: p50,
// p99 and p99.9 of one Put in ms. The same single-node etcd as
// BenchmarkClaim8 (fsync on, loopback).
//
//	go test -run '^$' -bench Put -benchtime 4000x ./graph/coord
func BenchmarkPut(b *testing.B) {
	for _, w := range []int{1, 8} {
		for _, gap := range []time.Duration{0, 5 * time.Millisecond} {
			b.Run(fmt.Sprintf("writers=%d/gap=%v", w, gap), func(b *testing.B) {
				srv := benchServer(b, false)
				clients := make([]*clientv3.Client, w)
				for i := range clients {
					var err error
					if clients[i], err = newClient(srv.Endpoint()); err != nil {
						b.Fatal(err)
					}
					defer clients[i].Close()
				}
				b.ResetTimer()
				puts := timePuts(b, clients, b.N, gap)
				b.StopTimer()
				b.ReportMetric(pct(puts, 50), "put-p50-ms")
				b.ReportMetric(pct(puts, 99), "put-p99-ms")
				b.ReportMetric(pct(puts, 99.9), "put-p99.9-ms")
			})
		}
	}
}

// benchServer is the etcd a benchmark talks to: BATCHPREP_BENCH_ETCD's, or
// one started in this process for the benchmark (closed when it ends).
func benchServer(b *testing.B, noFsync bool) interface{ Endpoint() string } {
	if ep := os.Getenv("BATCHPREP_BENCH_ETCD"); ep != "" {
		return endpoint(ep)
	}
	s, err := Serve(ServerOptions{Dir: filepath.Join(b.TempDir(), "etcd"), Fast: true, NoFsync: noFsync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s
}

// endpoint is an etcd started elsewhere.
type endpoint string

func (e endpoint) Endpoint() string { return string(e) }
