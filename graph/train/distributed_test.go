package train_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/coord"
	"github.com/batchprep/batchprep/graph/train"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// syncBuffer is a log shared by in-process ranks (one Write per line).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

type logLine struct {
	Kind   string       `json:"kind"`
	Rank   int          `json:"rank"`
	Pass   int          `json:"pass"`
	Claim  int64        `json:"claim"`
	Bucket graph.Bucket `json:"bucket"`
	Edges  int          `json:"edges"`
}

// Invariant 8, in one process under -race: three ranks, each with its own
// etcd client, train a 3x3 grid for 4 epochs. From their log: every bucket
// of every pass is committed exactly once, by all ranks together; the
// shared state's counters (updated by every commit under the
// compare-and-swap that also merges the parameters) lost no update; each
// partition's committed file is the one written by the last claim that
// trained it (a bucket's trainer starts from the last committed versions,
// and claims of one partition are granted and committed in sequence).
func TestDistributedInProcess(t *testing.T) {
	dir := t.TempDir()
	settings := strings.Replace(strings.Replace(tinySettings, "num_epochs = 40", "num_epochs = 4", 1), "workers = 2", "workers = 1", 1)
	cfg := fixture(t, dir, ringEdges(300), settings, 3)
	st := openStore(t, cfg)
	srv, err := coord.Serve(coord.ServerOptions{Dir: filepath.Join(dir, "etcd"), Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var log syncBuffer
	const w = 3
	// The plot shows every epoch that ended before a commit, as soon as
	// the committing rank has published it (not only when the run ends).
	var plotMu sync.Mutex
	plotted := func(done int64) {
		plotMu.Lock()
		defer plotMu.Unlock()
		ended := int(done / 9) // 9 buckets a pass, one pass an epoch
		if ended == 0 || ended == 4 {
			return
		}
		svg, err := os.ReadFile(filepath.Join(cfg.CheckpointPath, "training.svg"))
		if err != nil {
			t.Errorf("after %d buckets: %v", done, err)
			return
		}
		if n := strings.Count(string(svg), `r="3" fill="#1f77b4"`); n < ended {
			t.Errorf("after %d buckets the plot shows %d epochs, want at least %d", done, n, ended)
		}
	}
	var wg sync.WaitGroup
	for r := range w {
		wg.Go(func() {
			c, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			if _, err := train.RunDistributed(context.Background(), cfg, st,
				train.DistOptions{Client: c, Run: "inproc", Rank: r, World: w, LeaseTTL: 2 * time.Second, Log: &log,
					Bucket: func(ev train.DistEvent) { plotted(ev.Done) }}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	type key struct {
		pass int
		b    graph.Bucket
	}
	commits := map[key]int{}
	claimed := map[int64]bool{}
	lastClaim := map[int]int64{}
	edges := 0
	sc := bufio.NewScanner(&log.b)
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.Kind == "claim" {
			// Each claim is logged once, when granted (a claim made ahead
			// by its commit, the others by Next), before its commit.
			if claimed[l.Claim] {
				t.Fatalf("claim %d logged twice", l.Claim)
			}
			claimed[l.Claim] = true
		}
		if l.Kind != "commit" {
			continue
		}
		if !claimed[l.Claim] {
			t.Fatalf("claim %d committed before it was logged", l.Claim)
		}
		commits[key{l.Pass, l.Bucket}]++
		edges += l.Edges
		for _, p := range []int{l.Bucket.Lhs, l.Bucket.Rhs} {
			lastClaim[p] = max(lastClaim[p], l.Claim)
		}
	}
	for p := range 4 {
		for i := range 3 {
			for j := range 3 {
				if n := commits[key{p, graph.Bucket{Lhs: i, Rhs: j}}]; n != 1 {
					t.Errorf("pass %d bucket (%d,%d) committed %d times", p, i, j, n)
				}
			}
		}
	}
	man, err := train.ReadManifest(cfg.CheckpointPath)
	if err != nil || man == nil {
		t.Fatalf("manifest: %v", err)
	}
	if !man.Done || man.Buckets != 36 || man.Edges != int64(edges) || len(man.History) != 4 {
		t.Errorf("manifest: done %v, %d buckets, %d edges (log: %d), %d epochs", man.Done, man.Buckets, man.Edges, edges, len(man.History))
	}
	var count int64
	for _, h := range man.History {
		count += h.Count
	}
	if count != man.Edges {
		t.Errorf("history counts %d edges, the manifest %d", count, man.Edges)
	}
	for _, tr := range man.Tables {
		if want := fmt.Sprintf("emb_0_%d.v%d.bin", tr.Partition, lastClaim[tr.Partition]); tr.File != want {
			t.Errorf("partition %d: committed file %s, want %s", tr.Partition, tr.File, want)
		}
	}
	if len(man.Tables) != 3 {
		t.Errorf("%d tables in the manifest, want 3", len(man.Tables))
	}
}
