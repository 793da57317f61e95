package cli

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/ctf"
	"github.com/batchprep/batchprep/readopts"
	"github.com/batchprep/batchprep/source"
)

const readDescription = `
Read minibatches from a CTF corpus on the nominal timeline (SPEC A6): whole
sequences packed up to the minibatch size, in the randomizer's order, cut at
epoch ends, split among --workers ranks.

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
stderr; --quiet silences progress only.`

// maxShownDiagnostics bounds the per-line diagnostics printed on stderr; the
// rest are counted in the summary.
const maxShownDiagnostics = 20

type readFlags struct {
	streams        stringList
	definesMBSize  string
	cacheIndex     bool
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
	workers, rank  int
	cutAtSweep     bool
	start          string
	stateIn        string
	stateOut       string
	maxErrors      int
	format         string
	quiet          bool
	memoryLimit    string
	set            map[string]bool
}

func runRead(env *Env, args []string) error {
	fs := newFlagSet(env, "read", "CORPUS.ctf --stream NAME:DIM[:sparse] ...", readDescription)
	var f readFlags
	fs.Var(&f.streams, "stream", "a stream NAME:DIM or NAME:DIM:sparse (repeatable, at least one)")
	fs.Var(onceString{&f.definesMBSize, "at most one stream may define the minibatch size"}, "defines-mb-size", "the stream whose samples count for minibatch sizes")
	fs.Var(onceString{&f.label, "one stream is the label stream"}, "label", "the stream epoch sizes count (default: the minibatch-size count)")
	fs.StringVar(&f.mb, "mb", "256", "minibatch-size schedule per epoch, e.g. 128*2:1024")
	fs.StringVar(&f.epochSize, "epoch-size", "full", "epoch size: N label samples, full (one sweep) or inf")
	fs.IntVar(&f.epochs, "epochs", 1, "stop after this many epochs, counted from position 0")
	fs.Int64Var(&f.maxMinibatches, "max-minibatches", 0, "stop after this many minibatches in this run (0: no limit)")
	fs.StringVar(&f.randomize, "randomize", "window", "randomizer: none, cntk or window")
	fs.IntVar(&f.windowChunks, "window-chunks", 128, "randomization window in chunks")
	fs.Uint64Var(&f.windowSamples, "window-samples", 0, "randomization window in samples (instead of chunks)")
	fs.Uint64Var(&f.seed, "seed", 0, "random seed")
	fs.Int64Var(&f.chunkBytes, "chunk-bytes", ctf.DefaultChunkBytes, "chunk size in bytes")
	fs.IntVar(&f.chunkSequences, "chunk-sequences", 0, "chunk size in sequences (instead of bytes)")
	fs.IntVar(&f.workers, "workers", 1, "number of data-parallel ranks")
	fs.IntVar(&f.rank, "rank", 0, "this rank, 0 <= rank < workers")
	fs.BoolVar(&f.cutAtSweep, "cut-at-sweep", false, "end every minibatch at a sweep end")
	fs.StringVar(&f.start, "start", "", "begin at this nominal position (moved to the next sequence boundary)")
	fs.StringVar(&f.stateIn, "state-in", "", "resume from this state file")
	fs.StringVar(&f.stateOut, "state-out", "", "write the state here when stopping (atomically)")
	fs.IntVar(&f.maxErrors, "max-errors", 0, "bad sequences that may be skipped before reading fails")
	fs.StringVar(&f.format, "format", "jsonl", "output: jsonl, text or summary")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	fs.BoolVar(&f.cacheIndex, "cache-index", false, "keep the index in CORPUS.batchprep-index and reuse it while the file is unchanged")
	fs.StringVar(&f.memoryLimit, "memory-limit", "auto", "soft memory limit for the Go runtime: auto (window + 64MiB, less 8MiB for the process), off, or a size such as 512MiB")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if len(pos) != 1 {
		return usagef("want exactly one CORPUS.ctf argument, got %d", len(pos))
	}
	ctfCfg, srcCfg, startPos, err := f.configs()
	if err != nil {
		return err
	}
	diag := &readDiagnostics{w: env.Stderr}
	ctfCfg.Warn = diag.warn
	r, err := ctf.Open(pos[0], ctfCfg)
	if err != nil {
		return err
	}
	defer r.Close()
	// The reader is a source.Fingerprinter: the state's fingerprint names the
	// file (size, hash of both ends) and the settings that shape the index.
	src, err := source.New(r, srcCfg)
	if err != nil {
		return err
	}
	defer src.Close()
	switch {
	case f.stateIn != "":
		st, err := source.ReadStateFile(f.stateIn)
		if err != nil {
			return err
		}
		if err := src.Restore(st); err != nil {
			return fmt.Errorf("%s: %w", f.stateIn, err)
		}
	case f.set["start"]:
		if err := src.Seek(startPos); err != nil {
			return err
		}
	}
	restore, err := applyMemoryLimit(&f, r, src, ctfCfg.ChunkBytes)
	if err != nil {
		return err
	}
	defer restore()
	diag.flush() // what indexing reported
	runErr := readLoop(env, &f, src, r, diag)
	src.Close() // no prefetch may report a diagnostic after the summary
	diag.summary(r.Summary())
	if f.stateOut != "" {
		if err := source.WriteStateFile(f.stateOut, src.State()); err != nil {
			return err
		}
	}
	return runErr
}

// configs checks the flags and builds the reader and source configurations
// (readopts, shared with serve).
func (f *readFlags) configs() (ctf.Config, source.Config, uint64, error) {
	o := readopts.Options{Streams: f.streams, DefinesMBSize: f.definesMBSize, Label: f.label,
		MB: f.mb, EpochSize: f.epochSize, Epochs: f.epochs, MaxMinibatches: f.maxMinibatches,
		Randomize: f.randomize, WindowChunks: f.windowChunks, WindowSamples: f.windowSamples,
		Seed: f.seed, ChunkBytes: f.chunkBytes, ChunkSequences: f.chunkSequences,
		Workers: f.workers, Rank: f.rank, CutAtSweep: f.cutAtSweep, HasState: f.stateIn != "",
		MaxErrors: f.maxErrors, CacheIndex: f.cacheIndex, Given: f.set}
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

// readLoop reads until the epochs are done, the minibatch limit is reached
// or the context is cancelled, writing each minibatch in the chosen format.
func readLoop(env *Env, f *readFlags, src *source.Source, r *ctf.Reader, diag *readDiagnostics) error {
	out := bufio.NewWriterSize(env.Stdout, 1<<20)
	var total int64
	if src.Config().EpochSize == source.EpochFull {
		total = int64(uint64(f.epochs)*src.SweepSize()) - int64(src.Position())
	}
	prog := newProgress(env, "read", "samples", max(total, 0), f.quiet)
	t := readTotals{start: time.Now(), streams: make([]int64, len(r.Streams()))}
	var buf []byte
	var stopErr error
	for n := int64(0); f.maxMinibatches == 0 || n < f.maxMinibatches; n++ {
		if src.Epoch() >= f.epochs {
			break
		}
		if err := env.Ctx.Err(); err != nil {
			stopErr = err
			break
		}
		mb, err := src.Next()
		diag.flush()
		if err != nil {
			stopErr = err
			break
		}
		t.add(mb)
		switch f.format {
		case "jsonl":
			buf = appendReadJSON(buf[:0], mb)
		case "text":
			buf = appendReadText(buf[:0], mb)
		}
		if _, err := out.Write(buf); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		prog.Add(int64(mb.End - mb.Start))
	}
	prog.Done()
	if f.format == "summary" {
		t.write(out, r.Streams())
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return stopErr
}

// readTotals counts this rank's delivered data for the summary.
type readTotals struct {
	start                           time.Time
	minibatches, sequences, skipped int64
	samples                         int64 // minibatch-size samples (global span)
	streams                         []int64
}

func (t *readTotals) add(mb *source.Minibatch) {
	t.minibatches++
	t.sequences += int64(len(mb.Sequences))
	t.skipped += int64(len(mb.Skipped))
	t.samples += int64(mb.End - mb.Start)
	for i := range mb.Streams {
		t.streams[i] += int64(mb.Streams[i].Samples())
	}
}

func (t *readTotals) write(w io.Writer, streams []corpus.Stream) {
	el := time.Since(t.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(t.samples) / el
	}
	fmt.Fprintf(w, "minibatches: %d\nsequences: %d\nsamples: %d\n", t.minibatches, t.sequences, t.samples)
	for i, s := range streams {
		fmt.Fprintf(w, "samples %s: %d\n", s.Name, t.streams[i])
	}
	fmt.Fprintf(w, "skipped sequences: %d\nseconds: %.3f\nsamples/s: %.0f\n", t.skipped, el, rate)
}

// appendReadJSON writes SPEC A6's JSON line, built by hand for speed.
func appendReadJSON(b []byte, mb *source.Minibatch) []byte {
	b = append(b, `{"step":`...)
	b = strconv.AppendUint(b, mb.Step, 10)
	b = append(b, `,"epoch":`...)
	b = strconv.AppendInt(b, int64(mb.Epoch), 10)
	b = append(b, `,"sweep":`...)
	b = strconv.AppendUint(b, mb.Sweep, 10)
	b = append(b, `,"start":`...)
	b = strconv.AppendUint(b, mb.Start, 10)
	b = append(b, `,"end":`...)
	b = strconv.AppendUint(b, mb.End, 10)
	b = append(b, `,"end_of_sweep":`...)
	b = strconv.AppendBool(b, mb.EndOfSweep)
	b = append(b, `,"end_of_epoch":`...)
	b = strconv.AppendBool(b, mb.EndOfEpoch)
	b = append(b, `,"sequences":[`...)
	for i, s := range mb.Sequences {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(s), 10)
	}
	b = append(b, `],"ids":[`...)
	for i, id := range mb.IDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, id)
	}
	b = append(b, `],"samples":{`...)
	for i := range mb.Streams {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, mb.Streams[i].Name)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(mb.Streams[i].Samples()), 10)
	}
	b = append(b, '}')
	if len(mb.Skipped) > 0 {
		b = append(b, `,"skipped":[`...)
		for i, s := range mb.Skipped {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(s.Sequence), 10)
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...)
}

// appendJSONString appends s as a JSON string (invalid UTF-8 becomes U+FFFD,
// as encoding/json does).
func appendJSONString(b []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// appendReadText writes one readable line per minibatch.
func appendReadText(b []byte, mb *source.Minibatch) []byte {
	b = fmt.Appendf(b, "step %d epoch %d sweep %d [%d, %d) %d sequences", mb.Step, mb.Epoch, mb.Sweep, mb.Start, mb.End, len(mb.Sequences))
	for i := range mb.Streams {
		b = fmt.Appendf(b, " %s=%d", mb.Streams[i].Name, mb.Streams[i].Samples())
	}
	if mb.EndOfSweep {
		b = append(b, " end-of-sweep"...)
	}
	if mb.EndOfEpoch {
		b = append(b, " end-of-epoch"...)
	}
	if len(mb.Skipped) > 0 {
		b = fmt.Appendf(b, " skipped=%d", len(mb.Skipped))
	}
	b = append(b, " ids"...)
	const shown = 8
	for i, id := range mb.IDs {
		if i == shown {
			b = fmt.Appendf(b, " ...(+%d)", len(mb.IDs)-shown)
			break
		}
		b = append(b, ' ')
		b = append(b, id...)
	}
	return append(b, '\n')
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
		d.pending = append(d.pending, "batchprep read: "+e.Error()+"\n")
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

func (d *readDiagnostics) summary(s ctf.Summary) {
	d.flush()
	if d.shown > maxShownDiagnostics {
		fmt.Fprintf(d.w, "batchprep read: %d more diagnostics not shown\n", d.shown-maxShownDiagnostics)
	}
	if s.BadSequences > 0 {
		fmt.Fprintf(d.w, "batchprep read: skipped %d bad sequences:%s\n", s.BadSequences, kindCounts(s.Skipped))
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

// parseMemoryLimit parses --memory-limit: "auto", "off" (or "0"), or a byte
// count with an optional KiB, MiB or GiB suffix.
func parseMemoryLimit(v string) (limit int64, auto bool, err error) {
	switch v {
	case "auto":
		return 0, true, nil
	case "off", "0":
		return 0, false, nil
	}
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSuffix(v, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || n > (1<<62)/mult {
		return 0, false, errors.New("want auto, off, or a positive size such as 512MiB")
	}
	return n * mult, false, nil
}

// applyMemoryLimit sets the Go runtime's soft memory limit for the read and
// returns a function restoring the previous one. With "auto" the limit is
// the bound of docs/source.md, the bytes of the chunks the source keeps
// (ResidentChunks times the chunk size) plus 64 MiB, less an 8 MiB reserve
// for the process, raised when the index alone nearly fills that
// (source.MemoryLimit); without a limit the
// collector lets the heap grow to about twice the live data (GOGC=100) and
// the peak exceeds the bound. A GOMEMLIMIT in the environment wins over
// "auto".
func applyMemoryLimit(f *readFlags, r *ctf.Reader, src *source.Source, chunkBytes int64) (func(), error) {
	limit, auto, err := parseMemoryLimit(f.memoryLimit)
	if err != nil {
		return nil, usagef("--memory-limit %q: %v", f.memoryLimit, err)
	}
	if auto {
		if os.Getenv("GOMEMLIMIT") != "" {
			return func() {}, nil
		}
		limit = autoMemoryLimit(r, src, chunkBytes)
	}
	if limit == 0 {
		return func() {}, nil
	}
	old := debug.SetMemoryLimit(limit)
	if readLimitHook != nil {
		readLimitHook()
	}
	return func() { debug.SetMemoryLimit(old) }, nil
}

// readLimitHook, when set by a test, runs once the read's limit is in force.
var readLimitHook func()

// autoMemoryLimit is source.MemoryLimit for this read: window bytes + 64 MiB,
// less the 8 MiB process reserve (raised when the index leaves too little
// room). The window's chunk size
// is the configured chunk size, or the file's average chunk when the chunks
// are counted in sequences (or run larger than configured).
func autoMemoryLimit(r *ctf.Reader, src *source.Source, chunkBytes int64) int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	per := chunkBytes
	if info, err := os.Stat(r.Path()); err == nil {
		per = max(per, info.Size()/int64(max(r.Layout().NumChunks(), 1)))
	}
	return source.MemoryLimit(int64(ms.HeapInuse), int64(src.ResidentChunks())*per)
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
