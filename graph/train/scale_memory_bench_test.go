package train_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/train"
)

// BenchmarkTrainScaleMemory trains one epoch of a generated graph with
// `batchprep train` in a child process for each partition count and
// reports its peak RSS (VmHWM, polled from /proc/PID/status, and the
// child's rusage) next to the memory model's prediction and the issue's
// target, (2/P) x (embeddings + Adagrad state) + 512 MiB, of the entities
// the imported edges name. Behind
// BATCHPREP_SCALE=1 (it imports and trains 10 M edges per partition
// count). Parameters (environment):
//
//	BATCHPREP_SCALE_ENTITIES    default 1000000
//	BATCHPREP_SCALE_EDGES       default 10000000
//	BATCHPREP_SCALE_PARTITIONS  default 1,4,8,16
//	BATCHPREP_SCALE_NEGS        uniform negatives, default 1000
//	BATCHPREP_SCALE_LIMIT       --memory-limit, default none
//	BATCHPREP_SCALE_BUFFERS     partition_buffer values, default 2 (above 2,
//	                            with bucket_order = "buffer")
//
// The graph is graph/gen's power-law graph (writeScaleTSV: rank exponent
// 0.8, BATCHPREP_SCALE_ZIPF=0 for uniform endpoints; 1 relation, seed 1); the config is the issue's: d = 100, ComplEx, softmax, 50 batch
// and 1000 uniform negatives, 2 workers, no holdout, one epoch.
//
//	BATCHPREP_SCALE=1 go test ./graph/train -run '^$' -bench TrainScaleMemory -benchtime 1x -timeout 6h
func BenchmarkTrainScaleMemory(b *testing.B) {
	skipUnlessSet(b, "BATCHPREP_SCALE", "set BATCHPREP_SCALE=1 to train generated graphs of 10 M edges (see the comment)")
	entities := envInt(b, "BATCHPREP_SCALE_ENTITIES", 1_000_000)
	edges := envInt(b, "BATCHPREP_SCALE_EDGES", 10_000_000)
	negs := envInt(b, "BATCHPREP_SCALE_NEGS", 1000)
	parts := envCounts(b, "BATCHPREP_SCALE_PARTITIONS", []int{1, 4, 8, 16})
	dir := b.TempDir()
	bin := buildBatchprep(b, dir)
	tsv := filepath.Join(dir, "edges.tsv")
	if err := writeScaleTSV(b, tsv, entities, edges); err != nil {
		b.Fatal(err)
	}
	buffers := envCounts(b, "BATCHPREP_SCALE_BUFFERS", []int{2})
	imported := map[int]string{}
	for _, p := range parts {
		for _, c := range buffers {
			if p == 1 && c > 2 {
				continue
			}
			name := fmt.Sprintf("P=%d", p)
			if len(buffers) > 1 || c != 2 {
				name += fmt.Sprintf("/c=%d", c)
			}
			scaleMemoryRun(b, name, bin, dir, tsv, imported, negs, p, c, edges)
		}
	}
}

// scaleMemoryRun is one BenchmarkTrainScaleMemory setting: P partitions
// (imported once into imported) and a buffer of c.
func scaleMemoryRun(b *testing.B, name, bin, dir, tsv string, imported map[int]string, negs, p, c, edges int) {
	b.Run(name, func(b *testing.B) {
		sub := filepath.Join(dir, fmt.Sprintf("p%d", p))
		cfgPath, ok := imported[p]
		if !ok {
			cfgPath = importWithBinary(b, bin, sub, scaleConfig(sub, negs, p), tsv)
			imported[p] = cfgPath
		}
		cfg, err := config.Load(cfgPath)
		if err != nil {
			b.Fatal(err)
		}
		sets := []string{"--set", fmt.Sprintf("partition_buffer=%d", c)}
		cfg.PartitionBuffer = c
		if c > 2 {
			sets = append(sets, "--set", "bucket_order=buffer")
			cfg.BucketOrder = "buffer"
		}
		limit := os.Getenv("BATCHPREP_SCALE_LIMIT")
		if limit != "" {
			cfg.MemoryLimit = limit
		}
		st, err := edgestore.Open(cfg)
		if err != nil {
			b.Fatal(err)
		}
		pr, err := train.Predict(cfg, st, cfg.MemoryLimitBytes(), "memory_limit")
		// The embeddings and Adagrad state of the entities the store
		// holds (those the edges name), not of the generator's range.
		var rows int64
		for part := range p {
			n, err := st.EntityCount("all", part)
			if err != nil {
				b.Fatal(err)
			}
			rows += int64(n)
		}
		st.Close()
		if err != nil {
			b.Fatal(err)
		}
		noAhead := pr.Peak
		if pr.Prefetch {
			// The same run without the partition in flight (loaded
			// ahead or written behind), for a trainer that does not
			// prefetch: it is outside the Go heap, so no runtime share.
			noAhead -= pr.PrefetchBytes
		}
		for range b.N {
			os.RemoveAll(filepath.Join(sub, "ckpt"))
			args := append([]string{"train", "--quiet", "--config", cfgPath}, sets...)
			if limit != "" {
				args = append(args, "--memory-limit", limit)
			}
			start := time.Now()
			hwm, rusage := runPeak(b, bin, args)
			secs := time.Since(start).Seconds()
			emb := float64(rows) * 101 * 4
			target := 2/float64(p)*emb + 512<<20
			b.ReportMetric(float64(hwm)/(1<<20), "VmHWM-MiB")
			b.ReportMetric(float64(pr.Peak)/(1<<20), "predicted-MiB")
			b.ReportMetric(float64(noAhead)/(1<<20), "predicted-noprefetch-MiB")
			b.ReportMetric(target/(1<<20), "target-MiB")
			b.ReportMetric(float64(edges)/secs, "edges/s")
			b.Logf("P=%d c=%d: VmHWM %d MiB (rusage %d MiB), predicted %d MiB (%d without prefetch), target %.0f MiB, %.0f s\n%s",
				p, c, hwm>>20, rusage>>20, pr.Peak>>20, noAhead>>20, target/(1<<20), secs, pr)
		}
	})
}

// runPeak runs bin with args and returns its peak RSS: the largest VmHWM
// read from /proc/PID/status while it ran, and its rusage's maxrss.
func runPeak(b *testing.B, bin string, args []string) (hwm, rusage uint64) {
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				b.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, stderr.String())
			}
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				rusage = uint64(ru.Maxrss) << 10
			}
			return max(hwm, rusage), rusage
		case <-tick.C:
			hwm = max(hwm, vmHWM(status))
		}
	}
}

// vmHWM reads VmHWM (bytes) from a /proc/PID/status file, 0 if absent.
func vmHWM(path string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
