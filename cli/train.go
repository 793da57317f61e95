package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/plan"
	"github.com/batchprep/batchprep/graph/train"
	"github.com/batchprep/batchprep/internal/plural"
)

const trainDescription = `
Train graph embeddings (PyTorch-BigGraph models and config keys) on an
imported edge store: for each bucket of the plan, only that bucket's
partitions are in memory; Hogwild workers train its batches; a partition
that leaves memory is written to checkpoint_path, and a checkpoint is
committed every checkpoint_buckets buckets (num_partitions by default), at
every epoch's end and when the run is stopped.

Run the same command again after a crash, kill or Ctrl-C: training
continues from the last checkpoint with exactly the batches an
uninterrupted run would have trained. One train at a time per
checkpoint_path: a second is refused, naming the first one's pid and
host; eval, export and verify may run meanwhile. A checkpoint made with a different
config is refused, naming the differing keys; raising num_epochs continues
a finished run.

Written next to the checkpoint: training_log.jsonl (one JSON object per
bucket: loss, holdout metrics before and after, partition loads and saves)
and training.svg (loss and holdout MRR per epoch).

--set key=value overrides a config key (repeatable; dotted paths such as
relations.0.operator; values in JSON syntax or plain strings).

A fresh run starts from random embeddings, or from the PyTorch-BigGraph
checkpoint init_path names: each entity gets the row of the same name
(PBG's entity_names_*.json under the entity_path of the checkpoint's
config.json); train prints which, and how many matched, and refuses when
some of the store's entities have no row unless --init-allow-unmatched.
A PBG config whose entity_path and edge_paths hold PBG's imported data is
read as it is: the data are converted once into a store at entity_path +
".batchprep" and reused until PBG's files change (docs/formats-pbg.md).

Before it starts, train predicts its peak memory and its checkpoints' disk
space from the config and the store, prints them term by term on stderr,
and refuses a run that does not fit --memory-limit (or memory_limit, else
the machine's memory) or the free space of checkpoint_path, naming the
smallest num_partitions that would fit. With a limit, the Go heap is held
under it while training.

Distributed mode (docs/distributed.md): W processes, anywhere that sees
checkpoint_path and reaches etcd, share the buckets; start each with
--etcd HOST:PORT --rank R --world W (batchprep coordinator runs an etcd).
A killed rank's bucket returns to the pool after --lease-ttl; the same
command restarted rejoins the run. When etcd stops answering, ranks wait
up to --etcd-timeout for it and rejoin, else exit 1; rerun them once etcd
is back. --etcd-cacert, --etcd-cert, --etcd-key, --etcd-user and
--etcd-password-file reach an etcd with TLS and authentication;
"batchprep coordinator runs" lists and deletes runs.

Examples:
  batchprep train --config fb15k.toml
  batchprep train --config fb15k.toml --etcd 127.0.0.1:2379 --rank 0 --world 2
  batchprep train --config fb15k.toml --set dimension=200 --set workers=2
  batchprep train --config big.toml --memory-limit 2GiB
  batchprep train --config fb15k.toml --set num_epochs=20   # continue a finished run`

// loadConfig loads --config and applies --set overrides, for a command
// that reads the store: when the config names PyTorch-BigGraph's imported
// data, the store converted from it (usePBGData). A --set that is not
// key=value or names no config key is a usage mistake (exit 2); a bad
// value is a config error naming the key (exit 1).
func loadConfig(env *Env, path string, sets []string) (*config.Config, error) {
	cfg, err := loadConfigAsWritten(env, path, sets)
	if err != nil {
		return nil, err
	}
	return usePBGData(env, cfg)
}

// loadConfigAsWritten is loadConfig with the config's own paths, for
// import, which writes them.
func loadConfigAsWritten(env *Env, path string, sets []string) (*config.Config, error) {
	cfg, err := readConfig(env, path)
	if err != nil {
		return nil, err
	}
	return applySets(cfg, sets)
}

// applySets applies --set overrides to cfg (see loadConfig).
func applySets(cfg *config.Config, sets []string) (*config.Config, error) {
	out, err := config.WithOverrides(cfg, sets)
	if errors.Is(err, config.ErrBadOverride) {
		return nil, usagef("--set %s", oneprefix("", err.Error()))
	}
	return out, err
}

func runTrain(env *Env, args []string) error {
	fs := newFlagSet(env, "train", "", trainDescription)
	cfgPath := fs.String("config", "", "graph config (TOML, JSON or PBG's Python, PBG key names) (required)")
	var sets stringList
	fs.Var(&sets, "set", "override a config key: key=value (repeatable)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	memLimit := fs.String("memory-limit", "", "memory the run may use, e.g. 2GiB (overrides the config's memory_limit; default: the machine's memory)")
	allowUnmatched := fs.Bool("init-allow-unmatched", false, "with init_path: let the store's entities the checkpoint does not name start at random (default: refuse)")
	dist := trainDistFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *cfgPath == "":
		return usagef("--config is required")
	}
	if err := dist.check(); err != nil {
		return err
	}
	if *memLimit != "" {
		if _, err := config.ParseSize(*memLimit); err != nil {
			return usagef("--memory-limit %v", err)
		}
	}
	cfg, err := loadConfig(env, *cfgPath, sets)
	if err != nil {
		return err
	}
	limitFrom := "memory_limit"
	if *memLimit != "" {
		cfg.MemoryLimit, limitFrom = *memLimit, "--memory-limit"
	}
	if err := cfg.ValidateTraining(); err != nil {
		return err
	}
	warnTrainingOnEvalSets(env, cfg)
	store, err := openTrainedStore(*cfgPath, cfg, true)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := nothingToTrain(cfg, store); err != nil {
		return err
	}
	pr, err := checkTrainBudget(env, cfg, store, limitFrom, *quiet)
	if err != nil {
		return err
	}
	if dist.on() {
		if cfg.InitPath != nil {
			return fmt.Errorf("init_path is not supported by distributed training")
		}
		return dist.run(env, cfg, store, *quiet)
	}
	var prog *progress
	var tr *train.Trainer
	logw := &logWriter{}
	opts := train.Options{Log: logw, Edges: func(n int) { prog.Add(int64(n)) },
		Note: func(s string) { fmt.Fprintf(env.Stderr, "train: %s\n", s) },
		// A budget too small for a partition in flight (the
		// prediction's "prefetch off") trains with partition I/O in turn.
		SequentialIO: pr.Partitioned && !pr.Prefetch}
	var initNote string
	if opts.Init, initNote, err = initFrom(cfg, *cfgPath, store, *allowUnmatched); err != nil {
		return err
	}
	plot := &plotRefresh{dir: cfg.CheckpointPath, write: train.WritePlot}
	opts.Bucket = func(ev train.Event) {
		trainBucketLine(env, prog, cfg, ev, *quiet)
		plot.after(tr.Manifest().History)
	}
	tr, err = train.New(cfg, store, opts)
	if err != nil {
		return err
	}
	defer tr.Close() // the directory's lock, when Run is not reached
	plot.plotted = len(tr.Manifest().History)
	// The log is appended to: a damaged one, or one of another run, is
	// refused rather than extended (after New has checked the manifest and
	// the model file, which name a damage more precisely).
	logPath := filepath.Join(cfg.CheckpointPath, train.LogName)
	if err := train.CheckLog(logPath, tr.Manifest()); err != nil {
		return err
	}
	if logw.f, err = os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		return err
	}
	defer logw.f.Close()
	p := tr.Plan()
	total := int64(float64(p.EdgesPerEpoch()*int64(cfg.NumEpochs)) * (1 - cfg.EvalFraction))
	man := tr.Manifest()
	switch {
	case man.Buckets > 0:
		fmt.Fprintf(env.Stderr, "resuming %s after %d of %d buckets (epoch %d)\n", cfg.CheckpointPath, man.Buckets, tr.TotalBuckets(), man.Next.Epoch+1)
	case initNote != "":
		fmt.Fprintf(env.Stderr, "train: %s\n", initNote)
	case !*quiet:
		fmt.Fprintf(env.Stderr, "train: starting from random embeddings (init_scale %g, seed %d)\n", cfg.InitScale, cfg.Seed)
	}
	prog = newProgress(env, "train", "edges", total, *quiet)
	prog.Add(man.Edges)
	started := time.Now()
	runErr := tr.Run(env.Ctx)
	prog.Done()
	wall := time.Since(started)
	man = tr.Manifest()
	if len(man.History) > 0 {
		if err := train.WritePlot(cfg.CheckpointPath, man.History); err != nil && runErr == nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(cfg.CheckpointPath, train.PlotName), err)
		}
	}
	if errors.Is(runErr, context.Canceled) {
		fmt.Fprintf(env.Stderr, "stopped after %d of %d buckets; the checkpoint in %s is complete: run the same command to continue\n",
			man.Buckets, tr.TotalBuckets(), cfg.CheckpointPath)
	}
	if runErr != nil {
		return runErr
	}
	fmt.Fprintf(env.Stdout, "trained %s, %s; checkpoint in %s\n", plural.Count(man.Buckets, "bucket"), plural.Count(man.Edges, "edge"), cfg.CheckpointPath)
	printHistory(env.Stdout, man)
	printRunIO(env.Stdout, tr, wall)
	return nil
}

// nothingToTrain refuses, before anything is written, a run that would
// train no edge: num_epochs 0, or edge sets that hold no edge.
func nothingToTrain(cfg *config.Config, store *edgestore.Store) error {
	if cfg.NumEpochs == 0 {
		return errors.New("nothing to train: num_epochs is 0 (set it to 1 or more, e.g. --set num_epochs=10)")
	}
	p, err := plan.New(store, plan.OptionsFromConfig(cfg))
	if err != nil {
		return err
	}
	if p.EdgesPerEpoch() == 0 {
		sets := cfg.EdgeSets()
		var names []string
		for _, i := range cfg.TrainingEdgeSets() {
			names = append(names, sets[i].String())
		}
		return fmt.Errorf("nothing to train: the training edge sets hold no edge: %s; import edges first (batchprep import --config CFG FILE)",
			strings.Join(names, ", "))
	}
	return nil
}

// trainBucketLine reports a finished bucket: in the bar's note on a
// terminal, as a plain line otherwise; the plot is refreshed at each
// epoch's end.
func trainBucketLine(env *Env, prog *progress, cfg *config.Config, ev train.Event, quiet bool) {
	note := fmt.Sprintf("epoch %d/%d bucket (%d,%d) %d/%d, loss %.4f, loads %d (%s)",
		ev.Epoch+1, cfg.NumEpochs, ev.Bucket.Lhs, ev.Bucket.Rhs, ev.Done, ev.Total, ev.Loss, ev.IO.Loads, humanBytes(ev.IO.LoadBytes))
	if ev.HoldoutAfter != nil {
		note += fmt.Sprintf(", holdout MRR %.3f -> %.3f", ev.HoldoutBefore.MRR, ev.HoldoutAfter.MRR)
	}
	note += fmt.Sprintf(", I/O wait %.2fs", ev.LoadWait+ev.WriteWait)
	prog.SetNote(note)
	if !quiet && !prog.tty {
		fmt.Fprintf(env.Stderr, "train: %s, %.1fs\n", note, ev.Seconds)
	}
}

// humanBytes prints a byte count with a binary unit (train.Bytes).
func humanBytes(n int64) string { return train.Bytes(uint64(max(n, 0))) }

// logWriter appends the trainer's log lines to f, once it is open.
type logWriter struct{ f *os.File }

func (w *logWriter) Write(p []byte) (int, error) {
	if w.f == nil {
		return len(p), nil
	}
	return w.f.Write(p)
}

// printHistory prints a run's loss and holdout MRR per epoch and its
// partition traffic, after train's first summary line.
func printHistory(w io.Writer, man *train.Manifest) {
	for _, h := range man.History {
		line := fmt.Sprintf("epoch %d: loss %.4f", h.Epoch+1, h.Loss)
		if h.Holdout > 0 {
			line += fmt.Sprintf(", holdout MRR %.4f -> %.4f (%s)", h.MRRBefore, h.MRRAfter, plural.Count(h.Holdout, "edge"))
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "partitions: %s (%s), %s (%s)\n", plural.Count(man.IO.Loads, "load"), humanBytes(man.IO.LoadBytes), plural.Count(man.IO.Saves, "save"), humanBytes(man.IO.SaveBytes))
}

// epochDiskLine describes an epoch's partition traffic, as train reports
// it and plan --simulate predicts it.
func epochDiskLine(e train.EpochIO) string {
	return fmt.Sprintf("epoch %d disk: read %d B in %s, wrote %d B in %s", e.Epoch+1,
		e.LoadBytes, plural.Count(e.Loads, "partition load"), e.SaveBytes, plural.Count(e.Saves, "partition save"))
}

// printRunIO prints this run's partition traffic per epoch (the disk bytes
// plan --simulate predicts) and the time its buckets waited on it.
func printRunIO(w io.Writer, tr *train.Trainer, wall time.Duration) {
	for _, e := range tr.EpochIO() {
		line := epochDiskLine(e)
		if e.Partial {
			line += " (this run's part of the epoch: it resumed inside it)"
		}
		fmt.Fprintln(w, line)
	}
	load, write := tr.IOWait()
	share := 0.0
	if wall > 0 {
		share = 100 * (load + write).Seconds() / wall.Seconds()
	}
	fmt.Fprintf(w, "waited on partition I/O: %.2fs of %.2fs (%.1f%%): loads %.2fs, checkpoint writes %.2fs\n",
		(load + write).Seconds(), wall.Seconds(), share, load.Seconds(), write.Seconds())
}

// plotRefresh rewrites the training plot when a committed epoch joins the
// history: once per epoch, however many buckets report after the commit.
type plotRefresh struct {
	dir     string
	plotted int // epochs in the history when the plot was last written
	write   func(dir string, h []train.EpochStats) error
}

func (p *plotRefresh) after(h []train.EpochStats) {
	if len(h) > p.plotted {
		p.plotted = len(h)
		// Best effort: the write after the run reports errors.
		_ = p.write(p.dir, h)
	}
}
