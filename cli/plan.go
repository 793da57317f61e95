package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/bucket"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/plan"
	"github.com/batchprep/batchprep/graph/train"
	"github.com/batchprep/batchprep/internal/plural"
)

const planDescription = `
Print the batch schedule of a graph config without training: for
each epoch, edge set, edge chunk and bucket (in the config's bucket_order),
the bucket's held-out edges and every worker's batches, as edge ordinals.

Formats:
  jsonl    one JSON object per bucket and per batch (the default)
  text     each pass's bucket order as a grid (rows: lhs partitions,
           columns: rhs partitions, cell: the step at which the bucket ran)
           and the partition loads the order causes
  summary  totals only: buckets, batches, edges, partition loads, seconds,
           edges/s

--max-batches N stops after N batch records (0: no limit); --state-out then
saves where the plan stopped, and --state-in resumes there: the rest is
exactly what an uninterrupted run prints, and a bucket interrupted between
batches is printed again with "resumed":true. Ctrl-C stops after the
current batch and still writes --state-out (exit 130; SIGTERM 143). A run
that prints no batch (a state already at the end) says so on stderr.

--set key=value overrides a config key, as for train (repeatable; dotted
paths such as entities.user.num_partitions; values in JSON syntax or plain
strings).

Distributed mode (docs/distributed.md): with --etcd HOST:PORT --rank R
--world W, this process is one of W ranks sharing the buckets through etcd
(see 'batchprep coordinator'); it prints the bucket and batch lines of the
buckets it is given, bucket lines with "rank" and "claim". With --trainers
W --simulate, no etcd: a deterministic simulation of W trainers (a bucket
takes as long as it has edges) prints the schedule and the trainers' idle
time.

--simulate alone (no --trainers, no etcd) predicts a training run instead:
each epoch's partition loads and saves and their bytes, from the bucket
order and the entity counts (train prints the same lines for the epochs it
trains; a run from no checkpoint matches them exactly), then its peak
memory term by term (partitions, prefetch, workers, a chunk's edges,
runtime) against --memory-limit (else memory_limit, else the machine's
memory), the disk space per checkpoint, and whether train would start or
refuse (naming the smallest num_partitions that would fit). It is what
train prints before it starts.

Examples:
  batchprep plan --config fb15k.toml --format summary
  batchprep plan --config fb15k.toml --format text --set bucket_order=outside_in
  batchprep plan --config fb15k.toml --max-batches 1000 --state-out plan.json > part1.jsonl
  batchprep plan --config fb15k.toml --state-in plan.json > part2.jsonl
  batchprep plan --config fb15k.toml --etcd 127.0.0.1:2379 --rank 0 --world 2
  batchprep plan --config fb15k.toml --trainers 4 --simulate
  batchprep plan --config big.toml --simulate --memory-limit 2GiB`

// openPlanStore opens the store a config names (replaced in tests).
var openPlanStore = func(cfg *config.Config) (graph.Reader, func() error, error) {
	s, err := edgestore.Open(cfg)
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}

func runPlan(env *Env, args []string) error {
	fs := newFlagSet(env, "plan", "", planDescription)
	cfgPath := fs.String("config", "", "graph config `file` (TOML, JSON or PBG's Python, PBG key names; docs/config.md) (required, no default)")
	var sets stringList
	fs.Var(&sets, "set", "override a config key: key=value (repeatable), as given to train")
	maxBatches := fs.Int64("max-batches", 0, "stop after this many batch records (0: no limit)")
	stateIn := fs.String("state-in", "", "resume from this state file")
	stateOut := fs.String("state-out", "", "write the state here when stopping or finishing (atomically)")
	format := fs.String("format", "jsonl", "output: jsonl, text or summary")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	dist := distFlags(fs)
	memLimit := fs.String("memory-limit", "", "with --simulate alone: the memory budget of the predicted run, e.g. 2GiB (default: memory_limit, else the machine's memory)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *cfgPath == "":
		return usagef("--config is required")
	case *maxBatches < 0:
		return usagef("--max-batches %d: must be >= 0", *maxBatches)
	case *format != "jsonl" && *format != "text" && *format != "summary":
		return usagef("--format %q: want jsonl, text or summary", *format)
	}
	// --simulate with no trainers: the single trainer's disk traffic.
	trainIO := *dist.simulate && *dist.trainers == 0 && !dist.etcd.on()
	switch {
	case trainIO && (*stateIn != "" || *stateOut != "" || *maxBatches != 0):
		return usagef("--state-in, --state-out and --max-batches do not apply with --simulate")
	case !trainIO:
		if err := dist.check(*format, *stateIn != "" || *stateOut != "" || *maxBatches != 0); err != nil {
			return err
		}
	}
	cfg, err := loadConfig(env, *cfgPath, sets)
	if err != nil {
		return err
	}
	if *memLimit != "" && !dist.predictsMemory() {
		return usagef("--memory-limit goes with --simulate (without --trainers)")
	}
	r, closeStore, err := openPlanStore(cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	if trainIO {
		return planTrain(env, cfg, r, *memLimit)
	}
	p, err := plan.New(r, plan.OptionsFromConfig(cfg))
	if err != nil {
		return err
	}
	if dist.on() {
		return dist.run(env, p, r, *format)
	}
	st := p.Start()
	total := p.EdgesPerEpoch() * int64(cfg.NumEpochs)
	if *stateIn != "" {
		if err := checkStateKind(*stateIn, "plan"); err != nil {
			return err
		}
		s, err := plan.ReadStateFile(*stateIn)
		if err != nil {
			return err
		}
		st, total = *s, 0
	}
	it, err := p.Iter(st)
	if err != nil {
		return fmt.Errorf("%s: %w", *stateIn, err)
	}
	out := bufio.NewWriterSize(env.Stdout, 1<<20)
	var sink planSink
	switch *format {
	case "jsonl":
		sink = &jsonlSink{w: out}
	case "text":
		sink = &textSink{w: out, p: p}
	default:
		sink = &summarySink{w: out, start: time.Now()}
	}
	if *format != "jsonl" {
		// The worker shares depend on the worker count, so say which was used.
		src := "from the config"
		if cfg.Workers == nil {
			src = "workers unset: the number of CPUs; set it to reproduce this plan elsewhere"
		}
		fmt.Fprintf(out, "workers: %d (%s)\n", cfg.NumWorkers(), src)
	}
	prog := newProgress(env, "plan", "edges", total, *quiet)
	tally := &planTally{p: p}
	var batches int64
	var stopErr error
	for (*maxBatches == 0 || batches < *maxBatches) && it.Next() {
		rec := it.Record()
		tally.add(rec)
		if err := sink.record(rec); err != nil {
			return err
		}
		if rec.Kind == plan.BucketRecord {
			prog.Add(int64(rec.Edges))
			continue
		}
		batches++
		select {
		case <-env.Ctx.Done():
			stopErr = context.Cause(env.Ctx)
		default:
		}
		if stopErr != nil {
			break
		}
	}
	if err := it.Err(); err != nil {
		if *stateIn != "" && errors.Is(err, plan.ErrState) {
			return fmt.Errorf("%s: %w", *stateIn, err)
		}
		return err
	}
	prog.Done()
	if err := sink.end(tally); err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if *stateOut != "" {
		if err := plan.WriteStateFile(*stateOut, it.State()); err != nil {
			return err
		}
	}
	if stopErr == nil && tally.batches == 0 {
		why := fmt.Sprintf("the config's %s hold no batch", plural.Count(cfg.NumEpochs, "epoch"))
		if cfg.NumEpochs == 1 {
			why = "the config's 1 epoch holds no batch"
		}
		if *stateIn != "" {
			why = fmt.Sprintf("the state in %s is at the end of the config's %s", *stateIn, plural.Count(cfg.NumEpochs, "epoch"))
		}
		fmt.Fprintf(env.Stderr, "batchprep plan: nothing to plan: %s\n", why)
	}
	return stopErr
}

// printTrainIO prints train's predicted partition traffic per epoch
// (train.PredictIO) and its total.
func printTrainIO(env *Env, cfg *config.Config, r graph.Reader) error {
	st, ok := r.(train.Store)
	if !ok {
		return errors.New("plan --simulate: the store gives no entity counts")
	}
	epochs, err := train.PredictIO(cfg, st)
	if err != nil {
		return err
	}
	every := plural.Count(cfg.CheckpointEvery(), "bucket")
	if train.AlignCommits(cfg) {
		every += " (at the end of a buffer state)"
	}
	fmt.Fprintf(env.Stdout, "train from no checkpoint, %s order, dimension %d, a checkpoint commit every %s: partition files of %d B header + 4 B x (dimension + 1) per entity\n",
		cfg.BucketOrder, cfg.Dimension, every, train.TableFileBytes(0, cfg.Dimension))
	if err := printBufferLoads(env.Stdout, cfg, r); err != nil {
		return err
	}
	var sum train.EpochIO
	for _, e := range epochs {
		fmt.Fprintln(env.Stdout, epochDiskLine(e))
		sum.Loads += e.Loads
		sum.LoadBytes += e.LoadBytes
		sum.Saves += e.Saves
		sum.SaveBytes += e.SaveBytes
	}
	_, err = fmt.Fprintf(env.Stdout, "total disk: read %d B (%s) in %s, wrote %d B (%s) in %s\n", sum.LoadBytes, humanBytes(sum.LoadBytes),
		plural.Count(sum.Loads, "partition load"), sum.SaveBytes, humanBytes(sum.SaveBytes), plural.Count(sum.Saves, "partition save"))
	return err
}

// printBufferLoads prints the partition loads of the first pass's order
// with the run's buffer of c partitions per type (bucket.BufferLoads:
// Belady eviction, starting empty, lhs and rhs partition p one partition)
// beside the fewest any order could cause (bucket.LowerBound).
func printBufferLoads(w io.Writer, cfg *config.Config, r graph.Reader) error {
	p, err := plan.New(r, plan.OptionsFromConfig(cfg))
	if err != nil {
		return err
	}
	l, rr := p.Shape()
	c := cfg.Buffer()
	_, err = fmt.Fprintf(w, "partition buffer of %d: %s in the first pass's order (lower bound %d for any order of the %dx%d buckets)\n",
		c, plural.Count(bucket.BufferLoads(p.Order(0, 0, 0), c), "partition load"), bucket.LowerBound(l, rr, c), l, rr)
	return err
}

// planTally counts what a run printed, for summary and text.
type planTally struct {
	p                           *plan.Plan
	buckets, batches            int64
	edges, trained, held, loads int64
	prev                        *graph.Bucket
	prevPass                    [3]int
}

// add counts rec. Partition loads: the first bucket of every pass, and the
// first bucket of a run (also a resumed one), load all their partitions;
// every other bucket loads the partitions its predecessor did not hold.
func (t *planTally) add(rec *plan.Record) {
	if rec.Kind == plan.BatchRecord {
		t.batches++
		t.trained += int64(len(rec.Rows))
		return
	}
	t.buckets++
	t.edges += int64(rec.Edges)
	if !rec.Resumed {
		t.held += int64(len(rec.Holdout))
	}
	pass := [3]int{rec.Epoch, rec.EdgeSet, rec.Chunk}
	seq := []graph.Bucket{rec.Bucket}
	if t.prev != nil && pass == t.prevPass && !rec.Resumed {
		seq = []graph.Bucket{*t.prev, rec.Bucket}
	}
	t.loads += int64(bucket.Loads(seq) - bucket.Loads(seq[:len(seq)-1]))
	b := rec.Bucket
	t.prev, t.prevPass = &b, pass
}

type planSink interface {
	record(*plan.Record) error
	end(*planTally) error
}

// jsonlSink writes SPEC B4's JSON lines, built by hand (plain integers
// only) to keep big plans fast. With claim set (distributed mode, SPEC
// B6), bucket lines carry "rank" and "claim".
type jsonlSink struct {
	w     io.Writer
	buf   []byte
	ords  []uint64
	claim *[2]int64 // rank, claim number
}

func (s *jsonlSink) record(r *plan.Record) error {
	b := s.buf[:0]
	if r.Kind == plan.BucketRecord {
		b = append(b, `{"kind":"bucket"`...)
	} else {
		b = append(b, `{"kind":"batch"`...)
	}
	b = appendField(b, "epoch", int64(r.Epoch))
	b = appendField(b, "edge_set", int64(r.EdgeSet))
	b = appendField(b, "chunk", int64(r.Chunk))
	b = append(b, `,"bucket":[`...)
	b = strconv.AppendInt(b, int64(r.Bucket.Lhs), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Bucket.Rhs), 10)
	b = append(b, ']')
	if r.Kind == plan.BucketRecord {
		b = appendField(b, "index", int64(r.Index))
		b = appendField(b, "edges", int64(r.Edges))
		b = append(b, `,"holdout":`...)
		s.ords = r.Ordinals(s.ords[:0], r.Holdout)
		b = appendList(b, s.ords)
		if r.Resumed {
			b = append(b, `,"resumed":true`...)
		}
		if s.claim != nil {
			b = appendField(b, "rank", s.claim[0])
			b = appendField(b, "claim", s.claim[1])
		}
	} else {
		b = appendField(b, "index", int64(r.Index))
		b = appendField(b, "worker", int64(r.Worker))
		b = appendField(b, "batch", int64(r.Batch))
		if r.Relation < 0 {
			b = append(b, `,"relation":null`...)
		} else {
			b = appendField(b, "relation", int64(r.Relation))
		}
		b = append(b, `,"edges":`...)
		s.ords = r.Ordinals(s.ords[:0], r.Rows)
		b = appendList(b, s.ords)
	}
	b = append(b, "}\n"...)
	s.buf = b
	_, err := s.w.Write(b)
	return err
}

func (s *jsonlSink) end(*planTally) error { return nil }

func appendField(b []byte, name string, v int64) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, v, 10)
}

func appendList(b []byte, v []uint64) []byte {
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, x, 10)
	}
	return append(b, ']')
}

// summarySink prints totals only.
type summarySink struct {
	w     io.Writer
	start time.Time
}

func (s *summarySink) record(*plan.Record) error { return nil }

func (s *summarySink) end(t *planTally) error {
	sec := time.Since(s.start).Seconds()
	rate := 0.0
	if sec > 0 {
		rate = float64(t.edges) / sec
	}
	_, err := fmt.Fprintf(s.w, "buckets: %d\nbatches: %d\nedges: %d (trained %d, held out %d)\n"+
		"partition loads: %d (the first bucket of each pass counts its loads)\nseconds: %.3f\nedges/s: %.0f\n",
		t.buckets, t.batches, t.edges, t.trained, t.held, t.loads, sec, rate)
	return err
}

// textSink draws each pass's bucket order as a grid when the pass ends (or
// the run stops).
type textSink struct {
	w       io.Writer
	p       *plan.Plan
	pass    [3]int
	started bool
	steps   map[graph.Bucket]int
	order   []graph.Bucket
	batches int64
	edges   int64
}

func (s *textSink) record(r *plan.Record) error {
	if r.Kind == plan.BatchRecord {
		s.batches++
		return nil
	}
	pass := [3]int{r.Epoch, r.EdgeSet, r.Chunk}
	if s.started && pass != s.pass {
		if err := s.flush(); err != nil {
			return err
		}
	}
	if !s.started {
		s.started, s.pass, s.steps, s.order = true, pass, map[graph.Bucket]int{}, s.order[:0]
	}
	s.steps[r.Bucket] = r.Index
	s.order = append(s.order, r.Bucket)
	s.edges += int64(r.Edges)
	return nil
}

func (s *textSink) flush() error {
	l, rr := s.p.Shape()
	o := s.p.Options()
	var sb strings.Builder
	fmt.Fprintf(&sb, "epoch %d, edge set %d, chunk %d: %s order, %d of %s, %s, %s\n",
		s.pass[0], s.pass[1], s.pass[2], o.BucketOrder, len(s.order), plural.Count(l*rr, "bucket"),
		plural.Count(s.batches, "batch", "batches"), plural.Count(s.edges, "edge"))
	width := len(strconv.Itoa(l*rr - 1))
	fmt.Fprintf(&sb, "%*s", width+6, "")
	for j := 0; j < rr; j++ {
		fmt.Fprintf(&sb, " %*d", width, j)
	}
	sb.WriteString("   (columns: rhs partition)\n")
	for i := 0; i < l; i++ {
		fmt.Fprintf(&sb, "lhs %*d", width+2, i)
		for j := 0; j < rr; j++ {
			if step, ok := s.steps[graph.Bucket{Lhs: i, Rhs: j}]; ok {
				fmt.Fprintf(&sb, " %*d", width, step)
			} else {
				fmt.Fprintf(&sb, " %*s", width, ".")
			}
		}
		sb.WriteString("\n")
	}
	fmt.Fprintf(&sb, "partition loads: %d (counting the first bucket's loads; lhs and rhs partition p are the same partition); with a buffer of %d: %d (lower bound %d)\n\n",
		bucket.Loads(s.order), o.Buffer(), bucket.BufferLoads(s.order, o.Buffer()), bucket.LowerBound(l, rr, o.Buffer()))
	s.started, s.batches, s.edges = false, 0, 0
	_, err := io.WriteString(s.w, sb.String())
	return err
}

func (s *textSink) end(t *planTally) error {
	if s.started {
		if err := s.flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(s.w, "total: %s, %s, %s, %s\n", plural.Count(t.buckets, "bucket"), plural.Count(t.batches, "batch", "batches"),
		plural.Count(t.edges, "edge"), plural.Count(t.loads, "partition load"))
	return err
}
