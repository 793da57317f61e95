package cli

import (
	"fmt"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/train"
)

// predictsMemory: --simulate without --trainers predicts a training run's
// memory and disk instead of simulating trainers.
func (d *planDist) predictsMemory() bool { return *d.simulate && *d.trainers == 0 }

// planTrain prints train's predicted disk traffic (printTrainIO), then
// what train would predict of its memory before starting on cfg's store,
// and whether it would start. With a memory limit and no partition_buffer,
// the buffer is the largest that fits, for both.
func planTrain(env *Env, cfg *config.Config, r graph.Reader, limit string) error {
	store, ok := r.(train.Store)
	if !ok {
		return fmt.Errorf("plan --simulate: the store of %s has no entity counts", cfg.EntityPath)
	}
	from := "memory_limit"
	if limit != "" {
		if _, err := config.ParseSize(limit); err != nil {
			return usagef("--memory-limit %v", err)
		}
		cfg.MemoryLimit, from = limit, "--memory-limit"
	}
	if cfg.PartitionBuffer == 0 && cfg.MemoryLimitBytes() > 0 {
		if err := cfg.ValidateTraining(); err != nil {
			return err
		}
	}
	chosen, err := chooseBuffer(cfg, store, from)
	if err != nil {
		return err
	}
	if err := printTrainIO(env, cfg, r); err != nil {
		return err
	}
	if err := cfg.ValidateTraining(); err != nil {
		return err
	}
	pr, refusal, err := predictTrain(cfg, store, from)
	if err != nil {
		return err
	}
	pr.BufferFit = pr.BufferFit || chosen
	fmt.Fprint(env.Stdout, pr)
	if refusal != nil {
		fmt.Fprintf(env.Stdout, "train would refuse to start: %s\n", oneprefix("train", refusal.Error()))
		return nil
	}
	fmt.Fprintln(env.Stdout, "train would start")
	return nil
}
