package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/corpus/mixture"
	"github.com/batchprep/batchprep/corpus/readopts"
	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/internal/objstore"
)

const readDescription = `
Read minibatches from a corpus on the nominal timeline: whole sequences
packed up to the minibatch size, in the randomizer's order, cut at epoch
ends, split among --workers ranks. The corpus is a CTF file or a Parquet
file (detected from its first bytes or a .parquet name; one row per
sequence, one column per stream: docs/formats-parquet-corpus.md).

Formats:
  jsonl    one JSON object per minibatch on stdout, nothing else (the
           default): step, epoch, sweep, start, end, end_of_sweep,
           end_of_epoch, sequences (ordinals), ids, samples (per stream,
           this rank's part), and "skipped" (ordinals whose data could not
           be parsed) when there are any
  text     one readable line per minibatch
  summary  totals only: minibatches, sequences, samples, seconds, samples/s

Reading stops when --epochs epochs (counted from position 0) are done or
--max-minibatches minibatches were read in this run, whichever comes first;
then --state-out is written (atomically). --state-in resumes from a state;
--start begins at a nominal position (rounded up to a sequence boundary,
steps counted from 0 there). Ctrl-C stops after the current minibatch and
still writes --state-out. Diagnostics, the skip summary and progress go to
stderr; --quiet silences progress only. A run that delivers no minibatch
says why on stderr. Exit codes: 0 ok, 1 a data or runtime error (the state
written covers only the minibatches stdout received), 2 usage, 130/143
after Ctrl-C/SIGTERM (the state is written).

Examples:
  batchprep read corpus.ctf --stream S0:943:sparse --stream S2:129:sparse --mb 256
  batchprep read corpus.ctf --stream x:2 --max-minibatches 100 --state-out st.json --format summary
  batchprep read corpus.ctf --stream x:2 --state-in st.json
  batchprep read corpus.ctf --stream x:2 --workers 4 --rank 1 --randomize cntk --seed 7
  batchprep read s3://b/corpus.ctf --stream x:2 --publish-index --max-minibatches 1 --format summary
  batchprep read s3://b/corpus.ctf --stream x:2 --workers 4 --rank 1 --split chunks
  batchprep read --mix A.ctf=0.7 --mix B.parquet=0.3 --stream x:2 --mb 1024`

// The defaults a user who sets nothing gets (docs/source.md, "Defaults").
// SPEC A6 names 32 MiB chunks; with 1 MiB chunks a 128-chunk window is a
// fraction of a large corpus, so the next window parses (32 chunks of it
// ahead) while this one is read, and file order parses chunks on every
// core without a chunk's worth of fresh memory per step.
const (
	defaultReadChunkBytes = readopts.DefaultChunkBytes
	defaultPrefetchChunks = readopts.DefaultPrefetchChunks
)

// maxShownDiagnostics bounds the per-line diagnostics printed on stderr; the
// rest are counted in the summary.
const maxShownDiagnostics = 20

type readFlags struct {
	streams        stringList
	definesMBSize  string
	cacheIndex     bool
	publishIndex   bool
	objects        *objstore.Options
	label          string
	mb             string
	epochSize      string
	epochs         int
	maxMinibatches int64
	randomize      string
	windowChunks   int
	windowSamples  uint64
	seed           uint64
	chunkBytes     int64
	chunkSequences int
	prefetchChunks int
	workers, rank  int
	split          string
	cutAtSweep     bool
	start          string
	stateIn        string
	stateOut       string
	maxErrors      int
	format         string
	quiet          bool
	memoryLimit    string
	mix            stringList
	set            map[string]bool
}

func runRead(env *Env, args []string) error {
	fs := newFlagSet(env, "read", "CORPUS.ctf --stream NAME:DIM[:sparse] ...", readDescription)
	var f readFlags
	fs.Var(&f.streams, "stream", "a stream `NAME:DIM[:sparse]` (repeatable, at least one)")
	fs.Var(onceString{&f.definesMBSize, "at most one stream may define the minibatch size"}, "defines-mb-size", "the `NAME` of the stream whose samples count for minibatch sizes (default: every line is a sample)")
	fs.Var(onceString{&f.label, "one stream is the label stream"}, "label", "the `NAME` of the stream epoch sizes count (default: the minibatch-size count)")
	fs.StringVar(&f.mb, "mb", "256", "minibatch-size schedule per epoch, e.g. 128*2:1024")
	fs.StringVar(&f.epochSize, "epoch-size", "full", "epoch size: N label samples, full (one sweep) or inf")
	fs.IntVar(&f.epochs, "epochs", 1, "stop after this many epochs, counted from position 0")
	fs.Int64Var(&f.maxMinibatches, "max-minibatches", 0, "stop after this many minibatches in this run (0: no limit)")
	fs.StringVar(&f.randomize, "randomize", "window", "randomizer: none, cntk or window")
	fs.IntVar(&f.windowChunks, "window-chunks", 128, "randomization window in chunks")
	fs.Uint64Var(&f.windowSamples, "window-samples", 0, "randomization window in samples (instead of chunks)")
	fs.Uint64Var(&f.seed, "seed", 0, "random seed")
	f.chunkBytes = defaultReadChunkBytes
	fs.Var((*byteSize)(&f.chunkBytes), "chunk-bytes", "chunk `size` in bytes, e.g. 1048576 or 32MiB (default: 1MiB; 32MiB, CNTK's, with --randomize cntk, so that the order is CNTK's)")
	fs.IntVar(&f.chunkSequences, "chunk-sequences", 0, "chunk size in sequences (instead of bytes)")
	fs.IntVar(&f.prefetchChunks, "prefetch-chunks", defaultPrefetchChunks, "with --randomize window and one worker (or --split chunks): chunks of the next window parsed while the current one is read (0: none)")
	fs.IntVar(&f.workers, "workers", 1, "number of data-parallel ranks")
	fs.IntVar(&f.rank, "rank", 0, "this rank, 0 <= rank < workers")
	fs.StringVar(&f.split, "split", "balanced", "how ranks split a minibatch: balanced (contiguous groups of equal samples) or chunks (each rank the sequences of its own chunks, so it reads only those; docs/source.md)")
	fs.BoolVar(&f.cutAtSweep, "cut-at-sweep", false, "end every minibatch at a sweep end")
	fs.StringVar(&f.start, "start", "", "begin at this nominal position (moved to the next sequence boundary)")
	fs.StringVar(&f.stateIn, "state-in", "", "resume from this state file")
	fs.StringVar(&f.stateOut, "state-out", "", "write the state here when stopping (atomically)")
	fs.IntVar(&f.maxErrors, "max-errors", 0, "bad sequences that may be skipped before reading fails")
	fs.StringVar(&f.format, "format", "jsonl", "output: jsonl, text or summary")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	fs.BoolVar(&f.cacheIndex, "cache-index", false, "keep the index in CORPUS.batchprep-index and reuse it while the file is unchanged")
	fs.BoolVar(&f.publishIndex, "publish-index", false, "put the index of each object read (a CTF index, Parquet counts) beside it, as KEY.batchprep-index, where readers on other hosts find it instead of indexing (docs/object-storage.md)")
	f.objects = objectFlags(fs, env)
	fs.Var(&f.mix, "mix", "a corpus of a weighted mixture, `CORPUS=WEIGHT` (0.7, or samples:N per epoch); repeatable, instead of the CORPUS argument (docs/mixtures.md)")
	fs.StringVar(&f.memoryLimit, "memory-limit", "auto", "soft memory limit for the Go runtime: auto (window + 64MiB, less 8MiB for the process), off, or a size such as 512MiB")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if len(f.mix) > 0 {
		if len(pos) > 0 {
			return usagef("--mix gives the corpora: no CORPUS argument with it (got %q)", pos[0])
		}
		return runReadMix(env, &f)
	}
	if len(pos) != 1 {
		return usagef("want exactly one CORPUS.ctf argument, got %d", len(pos))
	}
	ctfCfg, srcCfg, startPos, err := f.configs()
	if err != nil {
		return err
	}
	if f.publishIndex && !file.IsObject(pos[0]) {
		return usagef("--publish-index: %s is a local file; an index is published beside an object (s3://BUCKET/KEY)", pos[0])
	}
	diag := &readDiagnostics{w: env.Stderr}
	ctfCfg.Warn = diag.warn
	openCtx, stopOpen := openContext(env.Ctx)
	defer stopOpen()
	r, err := file.OpenWith(openCtx, pos[0], ctfCfg, file.Options{Objects: f.objectOptions(srcCfg)})
	if err != nil {
		return err
	}
	defer r.Close()
	if err := checkChunkMemory(pos[0], r.Layout(), r.Streams(), physicalMemory()); err != nil {
		return err
	}
	if f.publishIndex {
		if err := publishIndexes(env, &f, srcCfg, []file.Reader{r}); err != nil {
			return err
		}
	}
	// The reader is a source.Fingerprinter: the state's fingerprint names the
	// file (size, hash of both ends) and the settings that shape the index.
	src, err := source.New(r, srcCfg)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	defer src.Close()
	if err := f.position(src, startPos); err != nil {
		return err
	}
	restore, err := applyMemoryLimit(&f, r, src, ctfCfg.ChunkBytes)
	if err != nil {
		return err
	}
	defer restore()
	diag.flush() // what indexing reported
	startState := src.State()
	delivered, totals, runErr := readLoop(env, &f, sourceSteps(&f, src, r), diag)
	src.Close() // no prefetch may report a diagnostic after the summary
	diag.summary(summaryNoTotals(r), runErr, totals.skipped)
	if runErr == nil && totals.minibatches == 0 {
		fmt.Fprintf(env.Stderr, "batchprep read: %s\n", nothingRead(&f, startState))
	}
	if f.stateOut != "" {
		// Only what stdout received counts: after a failed write the state
		// is the one after the last minibatch written in full.
		if err := source.WriteStateFile(f.stateOut, delivered); err != nil {
			return errors.Join(runErr, err)
		}
	}
	return runErr
}

// summaryNoTotals is r's summary without the per-stream sample totals,
// which read does not print and which, for a CTF file, would read every
// chunk the run did not parse (the whole file after --max-minibatches 1).
func summaryNoTotals(r file.Reader) ctf.Summary {
	if c, ok := r.(interface{ SummaryNoTotals() ctf.Summary }); ok {
		return c.SummaryNoTotals()
	}
	return r.Summary()
}

// nothingRead explains a run that delivered no minibatch.
func nothingRead(f *readFlags, st source.State) string {
	switch {
	case f.stateIn != "" && st.Epoch >= f.epochs:
		return fmt.Sprintf("nothing to read: the state in %s is at epoch %d (position %d), and --epochs %d ends before it", f.stateIn, st.Epoch, st.Position, f.epochs)
	case f.set["start"] && st.Epoch >= f.epochs:
		return fmt.Sprintf("nothing to read: --start %s is in epoch %d, and --epochs %d ends before it", f.start, st.Epoch, f.epochs)
	}
	return fmt.Sprintf("nothing to read: 0 minibatches delivered (position %d, epoch %d, --epochs %d)", st.Position, st.Epoch, f.epochs)
}

// configs checks the flags and builds the reader and source configurations
// (readopts, shared with serve).
func (f *readFlags) configs() (ctf.Config, source.Config, uint64, error) {
	o := readopts.Options{Streams: f.streams, DefinesMBSize: f.definesMBSize, Label: f.label,
		MB: f.mb, EpochSize: f.epochSize, Epochs: f.epochs, MaxMinibatches: f.maxMinibatches,
		Randomize: f.randomize, WindowChunks: f.windowChunks, WindowSamples: f.windowSamples,
		Seed: f.seed, ChunkBytes: f.chunkBytes, ChunkSequences: f.chunkSequences,
		Workers: f.workers, Rank: f.rank, Split: f.split, CutAtSweep: f.cutAtSweep, HasState: f.stateIn != "",
		MaxErrors: f.maxErrors, CacheIndex: f.cacheIndex, PrefetchChunks: f.prefetchChunks, Given: f.set}
	if f.set["start"] {
		var err error
		if o.Start, err = strconv.ParseUint(f.start, 10, 64); err != nil && f.stateIn == "" {
			return ctf.Config{}, source.Config{}, 0, usagef("--start %q: want a nominal position (a sample count >= 0)", f.start)
		}
	}
	b, err := o.Build()
	if err != nil {
		return b.CTF, b.Source, 0, usagef("%v", err) // a setup that cannot work is a usage error
	}
	if _, _, err := parseMemoryLimit(f.memoryLimit); err != nil {
		return b.CTF, b.Source, 0, usagef("--memory-limit %q: %v", f.memoryLimit, err)
	}
	switch f.format {
	case "jsonl", "text", "summary":
	default:
		return b.CTF, b.Source, 0, usagef("--format %q: want jsonl, text or summary", f.format)
	}
	return b.CTF, b.Source, b.Start, nil
}

// outputChunk is how many bytes of minibatch lines readLoop collects before
// writing them to stdout.
const outputChunk = 1 << 20

// readSteps is what readLoop walks: one corpus's Source, or a Mixture,
// whose minibatches also name each sequence's corpus (mixed is then set).
type readSteps struct {
	state   func() source.State
	epoch   func() int
	next    func() (mb *source.Minibatch, mixed *mixture.Minibatch, err error)
	streams []corpus.Stream
	total   int64         // samples to read, for progress (0: unknown)
	corpora []string      // a mixture's corpus paths, for the summary
	readers []file.Reader // the corpora, for the summary's object counts
}

// sourceSteps are the steps of one corpus's Source.
func sourceSteps(f *readFlags, src *source.Source, r file.Reader) readSteps {
	var total int64
	if src.Config().EpochSize == source.EpochFull {
		total = max(int64(uint64(f.epochs)*src.SweepSize())-int64(src.Position()), 0)
	}
	return readSteps{state: src.State, epoch: src.Epoch, streams: r.Streams(), total: total, readers: []file.Reader{r},
		next: func() (*source.Minibatch, *mixture.Minibatch, error) {
			mb, err := src.Next()
			return mb, nil, err
		}}
}

// readLoop reads until the epochs are done, the minibatch limit is reached
// or the context is cancelled, writing each minibatch in the chosen format
// (a mixture's with each sequence's corpus in the JSON lines and the
// samples per corpus in the summary). It returns the state after the last
// minibatch whose output was written in full (the starting state when
// none was): a state saved from it is never ahead of what stdout
// received, even when a write fails midway.
func readLoop(env *Env, f *readFlags, st readSteps, diag *readDiagnostics) (source.State, readTotals, error) {
	delivered := st.state()
	pend := make([]byte, 0, outputChunk+4096)
	flush := func() error {
		if len(pend) > 0 {
			if _, err := env.Stdout.Write(pend); err != nil {
				return fmt.Errorf("writing output: %w", err)
			}
			pend = pend[:0]
		}
		delivered = st.state()
		return nil
	}
	prog := newProgress(env, "read", "samples", st.total, f.quiet)
	t := readTotals{start: time.Now(), streams: make([]int64, len(st.streams))}
	perCorpus := make([]uint64, len(st.corpora))
	var stopErr error
	for n := int64(0); f.maxMinibatches == 0 || n < f.maxMinibatches; n++ {
		if st.epoch() >= f.epochs {
			break
		}
		if err := env.Ctx.Err(); err != nil {
			stopErr = context.Cause(env.Ctx)
			break
		}
		mb, mixed, err := st.next()
		diag.flush()
		if err != nil {
			stopErr = err
			break
		}
		t.add(mb)
		var corpora, skipped []int
		if mixed != nil {
			corpora, skipped = mixed.Corpus, mixed.SkippedCorpus
			if corpora == nil {
				corpora = []int{} // a rank's empty part still names its (no) corpora
			}
			for k, s := range mixed.CorpusSamples {
				perCorpus[k] += s
			}
		}
		switch f.format {
		case "jsonl":
			pend = appendReadJSON(pend, mb, corpora, skipped)
		case "text":
			pend = appendReadText(pend, mb)
		}
		if len(pend) >= outputChunk {
			if err := flush(); err != nil {
				return delivered, t, err
			}
		}
		prog.Add(int64(mb.End - mb.Start))
	}
	prog.Done()
	if f.format == "summary" {
		var b bytes.Buffer
		t.write(&b, st.streams)
		for k, s := range perCorpus {
			fmt.Fprintf(&b, "samples corpus %d: %d (%s)\n", k, s, st.corpora[k])
		}
		writeObjectTotals(&b, st.readers)
		pend = append(pend, b.Bytes()...)
	}
	if err := flush(); err != nil {
		return delivered, t, err
	}
	return delivered, t, stopErr
}

// readDiagnostics collects the reader's diagnostics (which may arrive from
// a prefetch goroutine) and prints the first ones on stderr from the main
// goroutine, between minibatches; the rest are counted.
type readDiagnostics struct {
	w       io.Writer
	mu      sync.Mutex
	pending []string
	shown   int
}

func (d *readDiagnostics) warn(e ctf.Error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.shown < maxShownDiagnostics {
		d.pending = append(d.pending, "batchprep read: "+oneprefix("read", e.Error())+"\n")
	}
	d.shown++
}

// flush prints the pending diagnostics.
func (d *readDiagnostics) flush() {
	d.mu.Lock()
	p := d.pending
	d.pending = nil
	d.mu.Unlock()
	for _, line := range p {
		io.WriteString(d.w, line)
	}
}

// summary prints the diagnostics left and the bad-sequence count. The
// count of bad sequences found can exceed the skips in the delivered
// minibatches (the summary's "skipped sequences"): chunks are parsed ahead,
// and a sequence past --max-errors stops reading instead of being skipped.
func (d *readDiagnostics) summary(s ctf.Summary, runErr error, skipped int64) {
	d.flush()
	if d.shown > maxShownDiagnostics {
		fmt.Fprintf(d.w, "batchprep read: %d more diagnostics not shown\n", d.shown-maxShownDiagnostics)
	}
	var be *ctf.BudgetError
	switch {
	case errors.As(runErr, &be):
		fmt.Fprintf(d.w, "batchprep read: bad sequences found: %d (%s); the last one is more than --max-errors %d and stopped reading; %d skipped in the minibatches delivered\n",
			s.BadSequences, strings.TrimSpace(kindCounts(s.Skipped)), be.MaxErrors, skipped)
	case s.BadSequences > 0:
		fmt.Fprintf(d.w, "batchprep read: bad sequences found: %d (%s); %d skipped in the minibatches delivered\n",
			s.BadSequences, strings.TrimSpace(kindCounts(s.Skipped)), skipped)
	}
	if len(s.Warnings) > 0 {
		fmt.Fprintf(d.w, "batchprep read: warnings:%s\n", kindCounts(s.Warnings))
	}
}

func kindCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, m[k])
	}
	return b.String()
}

// onceString is a string flag that may be given once: a second value is an
// error rather than silently replacing the first.
type onceString struct {
	p   *string
	why string
}

func (o onceString) String() string {
	if o.p == nil {
		return ""
	}
	return *o.p
}

func (o onceString) Set(v string) error {
	if *o.p != "" {
		return fmt.Errorf("given twice (%q and %q): %s", *o.p, v, o.why)
	}
	*o.p = v
	return nil
}

// positioner is what read places before its first minibatch: a source or
// a mixture.
type positioner interface {
	Restore(source.State) error
	Seek(uint64) error
}

// position moves p to the state of --state-in, or to --start.
func (f *readFlags) position(p positioner, startPos uint64) error {
	switch {
	case f.stateIn != "":
		if err := checkStateKind(f.stateIn, "read"); err != nil {
			return err
		}
		st, err := source.ReadStateFile(f.stateIn)
		if err != nil {
			return err
		}
		if err := p.Restore(st); err != nil {
			return fmt.Errorf("%s: %w", f.stateIn, err)
		}
	case f.set["start"]:
		return p.Seek(startPos)
	}
	return nil
}

// openContext is the context of opening read's corpora: done when ctx is
// (Ctrl-C stops an index pass), but it never asks ctx's Err, which the
// read loop polls once per minibatch to stop after the current one.
func openContext(ctx context.Context) (context.Context, func()) {
	open, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	return open, func() { stop(); cancel() }
}
