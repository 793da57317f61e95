package train

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/batchprep/batchprep/graph/config"
)

// ErrBudget is the error of a run refused before it starts because its
// predicted peak memory, or its checkpoint, does not fit.
var ErrBudget = errors.New("train: does not fit")

// maxFitPartitions bounds the search for a partition count that fits.
const maxFitPartitions = 4096

// CheckBudget refuses (ErrBudget) a run whose predicted peak is over its
// budget, naming the smallest num_partitions that would fit (the store
// must then be imported again with it), or saying that none would.
func CheckBudget(cfg *config.Config, store Store, pr *Prediction) error {
	if pr.Fits() {
		return nil
	}
	s, err := storeShape(cfg, store)
	if err != nil {
		return err
	}
	now := currentPartitions(cfg)
	msg := fmt.Sprintf("it needs about %s of memory at its peak, more than the %s of %s",
		Bytes(pr.Peak), Bytes(pr.Budget), pr.BudgetFrom)
	if p, fit := smallestFit(cfg, s, pr.Budget, pr.BudgetFrom); fit != nil {
		return fmt.Errorf("%w: %s; num_partitions = %d (now %d) would fit, needing about %s: set it and import the graph again, or lower dimension or workers",
			ErrBudget, msg, p, now, Bytes(fit.Peak))
	}
	return fmt.Errorf("%w: %s; no num_partitions up to %d fits (the workers' arrays, the edges of a chunk and the runtime alone need about %s): lower dimension, workers or the negatives, set num_edge_chunks, or raise the budget",
		ErrBudget, msg, maxFitPartitions, Bytes(pr.mapped()+pr.heap()+runtimeBytes))
}

// currentPartitions is the largest num_partitions of the config's types.
func currentPartitions(cfg *config.Config) int {
	n := 1
	for _, e := range cfg.Entities {
		n = max(n, e.NumPartitions)
	}
	return n
}

// smallestFit finds the smallest partition count above the config's that
// fits budget, with the prediction at that count (nil when none up to
// maxFitPartitions does). The config's partitioned types (every type when
// none is) take the new count; their entities are spread evenly, and each
// bucket's edges keep the store's skew.
func smallestFit(cfg *config.Config, s shape, budget uint64, from string) (int, *Prediction) {
	vary := map[string]bool{}
	total := map[string]uint64{}
	for typ, e := range cfg.Entities {
		vary[typ] = e.NumPartitions > 1
		for _, n := range s.rows[typ] {
			total[typ] += n
		}
	}
	if currentPartitions(cfg) == 1 {
		for typ := range vary {
			vary[typ] = true
		}
	}
	for p := currentPartitions(cfg) + 1; p <= maxFitPartitions; p++ {
		c := *cfg
		c.Entities = map[string]config.Entity{}
		h := s
		h.rows = map[string][]uint64{}
		for typ, e := range cfg.Entities {
			if vary[typ] {
				e.NumPartitions = p
				per := (total[typ] + uint64(p) - 1) / uint64(p)
				h.rows[typ] = make([]uint64, min(p, c.Buffer()))
				for i := range h.rows[typ] {
					h.rows[typ][i] = per
				}
			} else {
				h.rows[typ] = s.rows[typ]
			}
			c.Entities[typ] = e
		}
		l, r := c.BucketShape()
		bucket := int64(float64(s.largestSet) * max(s.skew, 1) / float64(l*r))
		chunks := int64(1)
		if cfg.NumEdgeChunks != nil {
			chunks = int64(max(*cfg.NumEdgeChunks, 1))
		} else if cfg.MaxEdgesPerChunk > 0 {
			chunks = max((bucket+cfg.MaxEdgesPerChunk-1)/cfg.MaxEdgesPerChunk, 1)
		}
		h.chunkEdges = (bucket + chunks - 1) / chunks
		if pr := predict(&c, h, budget, from); pr.Fits() {
			return p, pr
		}
	}
	return 0, nil
}

// DiskFree is the space available to an unprivileged writer in dir, or in
// its nearest existing parent when dir does not exist yet.
func DiskFree(dir string) (uint64, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return 0, err
	}
	for {
		var st syscall.Statfs_t
		err := syscall.Statfs(d, &st)
		if err == nil {
			return uint64(st.Bavail) * uint64(st.Bsize), nil
		}
		parent := filepath.Dir(d)
		if !errors.Is(err, os.ErrNotExist) || parent == d {
			return 0, fmt.Errorf("train: free space of %s: %w", dir, err)
		}
		d = parent
	}
}

// CheckDisk refuses (ErrBudget) a run whose checkpoints would not fit in
// free bytes on checkpoint_path's file system: it needs the checkpoint's
// peak, less what the checkpoint already there takes.
func CheckDisk(cfg *config.Config, pr *Prediction, free uint64) error {
	var have uint64
	if man, err := ReadManifest(cfg.CheckpointPath); err == nil && man != nil {
		have = uint64(man.Model.Bytes)
		for _, t := range man.Tables {
			have += uint64(t.Bytes)
		}
	}
	need := pr.CheckpointPeak - min(have, pr.CheckpointPeak)
	if need <= free {
		return nil
	}
	return fmt.Errorf("%w: %s: checkpoints need about %s more disk space (%s each, up to %s while one is written), and %s is free",
		ErrBudget, cfg.CheckpointPath, Bytes(need), Bytes(pr.CheckpointBytes), Bytes(pr.CheckpointPeak), Bytes(free))
}

// FitBuffer chooses partition_buffer for a run with a memory budget and
// no partition_buffer set: the largest c, up to the largest partition
// count, whose prediction fits the budget, with a partition in flight
// (the load ahead) when the budget holds that too, else with partition
// I/O in turn: a partition more in the buffer saves more loads and saves
// than the load ahead saves waiting (docs/performance-train.md, 20 M
// entities in 2 GiB). 2 when none fits (the run is then refused by
// CheckBudget). It returns c and its prediction.
func FitBuffer(cfg *config.Config, store Store, budget uint64, from string) (int, *Prediction, error) {
	s, err := storeShape(cfg, store)
	if err != nil {
		return 0, nil, err
	}
	most := max(currentPartitions(cfg), config.DefaultPartitionBuffer)
	preds := make([]*Prediction, most+1)
	for c := most; c >= config.DefaultPartitionBuffer; c-- {
		with := *cfg
		with.PartitionBuffer = c
		preds[c] = predict(&with, s, budget, from)
	}
	for c := most; c >= config.DefaultPartitionBuffer; c-- {
		if preds[c].Fits() {
			return c, preds[c], nil
		}
	}
	return config.DefaultPartitionBuffer, preds[config.DefaultPartitionBuffer], nil
}
