package cli

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/train"
)

// checkChunkMemory refuses a corpus whose largest chunk would need more
// memory for its dense rows than limit bytes: parsing a chunk allocates
// samples x (sum of the dense dimensions) float32 values at once, so the
// check runs on the index, before any chunk is parsed. The error names the
// chunk, the bytes it needs and the limit.
func checkChunkMemory(path string, l *corpus.Layout, streams []corpus.Stream, limit uint64) error {
	var dense uint64
	for _, s := range streams {
		if !s.Sparse {
			dense += uint64(s.Dim)
		}
	}
	if dense == 0 || limit == 0 {
		return nil
	}
	for c := 0; c < l.NumChunks(); c++ {
		samples, _ := l.ChunkTotals(c)
		if need := samples * dense * 4; need > limit {
			return fmt.Errorf("%s: chunk %d holds %d samples of %d dense values each: %d MiB to parse, more than the %d MiB of memory this machine has; use smaller chunks (--chunk-sequences) or check the --stream dimensions",
				path, c, samples, dense, need>>20, limit>>20)
		}
	}
	return nil
}

// checkGraphMemory refuses an eval or export run whose estimated
// memory (graph/train's EvalMemory) is more than limit
// bytes, before the tables are allocated; limit 0 means unknown.
// hint says what the user can change.
func checkGraphMemory(cfgPath string, m train.Memory, limit uint64, hint string) error {
	if limit == 0 || m.Bytes <= limit {
		return nil
	}
	return fmt.Errorf("%s: the run needs about %v, more than the %d MiB of memory this machine has; %s",
		cfgPath, m, limit>>20, hint)
}

// evalMemoryHint is checkGraphMemory's advice: eval and export hold every
// partition at once (training is checked against its own prediction,
// checkTrainBudget).
const evalMemoryHint = "eval and export hold every partition at once: lower dimension, or use a machine with more memory"

// openTrainedStore opens the edge store cfg names and checks, before any
// table is allocated, that the run fits this machine: forTraining selects
// the trainer's estimate (two partitions per type), otherwise eval's and
// export's (every partition). The caller closes the store.
func openTrainedStore(cfgPath string, cfg *config.Config, forTraining bool) (*edgestore.Store, error) {
	store, err := edgestore.Open(cfg)
	if err != nil {
		return nil, err
	}
	if forTraining {
		return store, nil // checkTrainBudget, once the run is known to train something
	}
	mem, err := train.EvalMemory(cfg, store)
	if err == nil {
		err = checkGraphMemory(cfgPath, mem, physicalMemory(), evalMemoryHint)
	}
	if err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

// trainBudget is a run's memory budget: memory_limit (set by from), else
// the machine's memory (0 when unknown).
func trainBudget(cfg *config.Config, from string) (uint64, string) {
	if n := cfg.MemoryLimitBytes(); n > 0 {
		return n, from
	}
	return physicalMemory(), "this machine's memory"
}

// checkTrainBudget predicts a training run's peak memory and checkpoint
// size (graph/train's Predict), prints the prediction on stderr unless
// quiet, and refuses a run that does not fit its budget or the free space
// of checkpoint_path. With a memory_limit, the Go heap is then held under
// it, less the partitions, which are outside the Go heap
// (debug.SetMemoryLimit). The prediction says whether the budget holds a
// partition in flight (written behind, then loaded ahead).
func checkTrainBudget(env *Env, cfg *config.Config, store train.Store, from string, quiet bool) (*train.Prediction, error) {
	pr, refusal, err := predictTrain(cfg, store, from)
	if err != nil {
		return nil, err
	}
	if !quiet {
		fmt.Fprint(env.Stderr, pr)
	}
	if refusal != nil {
		return nil, refusal
	}
	if n := cfg.MemoryLimitBytes(); n > 0 {
		debug.SetMemoryLimit(int64(min(pr.HeapLimit(n), 1<<62)))
	}
	return pr, nil
}

// predictTrain predicts a training run's memory and disk space against its
// budget (see trainBudget) and the free space of checkpoint_path; refusal
// says why train would not start (nil: it would).
func predictTrain(cfg *config.Config, store train.Store, from string) (pr *train.Prediction, refusal, err error) {
	chosen, err := chooseBuffer(cfg, store, from)
	if err != nil {
		return nil, nil, err
	}
	budget, from := trainBudget(cfg, from)
	if pr, err = train.Predict(cfg, store, budget, from); err != nil {
		return nil, nil, err
	}
	pr.BufferFit = chosen
	if refusal = train.CheckBudget(cfg, store, pr); refusal != nil && !errors.Is(refusal, train.ErrBudget) {
		return nil, nil, refusal
	}
	if refusal == nil {
		free, err := train.DiskFree(cfg.CheckpointPath)
		if err != nil {
			return nil, nil, err
		}
		refusal = train.CheckDisk(cfg, pr, free)
	}
	return pr, refusal, nil
}

// chooseBuffer sets partition_buffer, when the config leaves it unset and
// a memory limit is given (memory_limit or --memory-limit, named by from),
// to the largest buffer that fits the limit (train.FitBuffer); the
// prediction then says it was chosen. It reports whether it chose.
func chooseBuffer(cfg *config.Config, store train.Store, from string) (bool, error) {
	budget := cfg.MemoryLimitBytes()
	if cfg.PartitionBuffer != 0 || budget == 0 {
		return false, nil
	}
	c, pr, err := train.FitBuffer(cfg, store, budget, from)
	if err != nil || !pr.Fits() {
		return false, err // nothing fits: the default, which the budget check refuses
	}
	cfg.PartitionBuffer = c
	return true, nil
}
