package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/internal/plural"
)

const inspectDescription = `
Index a CTF or Parquet corpus, parse every chunk and report: sequences, samples per
stream, the sequence-length histogram, chunks, and every warning and error
with file, line, column and byte offset.

Without --stream the streams are inferred from a scan (a stream is sparse
when any value is i:v; dense dimension = most values in one sample, sparse
dimension = largest index + 1) and the flags to use are printed. A file
that parses without a warning or an error is read once: the streams are
guessed from its first 8 MiB and the parse confirms them; any diagnostic
stops that, and the whole file is scanned before it is parsed again.

In a Parquet file, every column of numbers nested one or two lists deep is
a stream (integers sparse, other numbers dense), but "id" and a sparse
stream's NAME_values. The other columns are listed as left out, each with
the reason (strings, decimals, one number per row, deeper lists): the
message read gives when one is named as a stream.

The inferred dimensions are lower bounds: the largest seen in this file.
Another file of the same corpus (a training set beside a test set) may need
larger ones; give --stream with the dimensions of the whole corpus.

FILE may name an object, s3://BUCKET/KEY, read with the --fetch-* and
--cache-* flags (docs/object-storage.md); a CTF object's index is always
cached (--cache-index is implied).

Exit codes: 0 ok (bad sequences within --max-errors are reported, not
fatal), 1 more bad sequences than --max-errors, a file that is not CTF, or
a runtime error, 2 usage.

With --mix FILE=WEIGHT (repeatable, as read --mix) each corpus is
reported as above, then the mixture (docs/mixtures.md): its anchor, the
corpus whose sweeps are the mixture's, and per corpus its share and how
many samples of the mixture's timeline one of its sweeps spans.

Examples:
  batchprep inspect corpus.ctf
  batchprep inspect corpus.ctf --format json
  batchprep inspect --mix a.ctf=0.7 --mix b.parquet=0.3
  batchprep inspect s3://corpora/atis.train.parquet
  batchprep inspect corpus.ctf --stream S0:943:sparse --stream S1:26:sparse --max-errors 10`

// maxListedDiagnostics bounds the diagnostics listed in the report; all are
// counted.
const maxListedDiagnostics = 100

type inspectReport struct {
	File            string           `json:"file"`
	Format          string           `json:"format,omitempty"`
	RowGroups       int              `json:"row_groups,omitempty"`
	Sequences       int              `json:"sequences"`
	Samples         map[string]int64 `json:"samples"`
	TotalSamples    uint64           `json:"total_samples"`
	TotalLabels     uint64           `json:"total_labels"`
	Chunks          int              `json:"chunks"`
	Errors          int              `json:"errors"`
	Warnings        int              `json:"warnings"`
	LineMode        bool             `json:"line_mode"`
	Streams         []inspectStream  `json:"streams"`
	Inferred        bool             `json:"inferred"`
	DimsLowerBound  bool             `json:"dims_are_lower_bounds,omitempty"`
	Flags           string           `json:"flags"`
	LeftOut         []inspectLeftOut `json:"columns_left_out,omitempty"`
	Histogram       []histBin        `json:"length_histogram"`
	ChunkSequences  [2]int           `json:"chunk_sequences_min_max"`
	Skipped         map[string]int   `json:"skipped_by_kind"`
	WarningKinds    map[string]int   `json:"warnings_by_kind"`
	Diagnostics     []inspectDiag    `json:"diagnostics"`
	DiagnosticsLeft int              `json:"diagnostics_not_listed"`
	Fatal           string           `json:"fatal,omitempty"`
}

type inspectStream struct {
	Name   string `json:"name"`
	Dim    int    `json:"dim"`
	Sparse bool   `json:"sparse"`
}

// inspectLeftOut is a Parquet column inference did not take as a stream.
type inspectLeftOut struct {
	Column string `json:"column"`
	Reason string `json:"reason"`
}

type histBin struct {
	Min   uint32 `json:"min"`
	Max   uint32 `json:"max"`
	Count int    `json:"count"`
}

type inspectDiag struct {
	Severity string `json:"severity"`
	Kind     string `json:"kind"`
	File     string `json:"file"`
	Line     int64  `json:"line"`
	Col      int    `json:"col"`
	Offset   int64  `json:"offset"`
	Message  string `json:"message"`
}

func runInspect(env *Env, args []string) error {
	fs := newFlagSet(env, "inspect", "FILE", inspectDescription)
	var streams, mix stringList
	fs.Var(&mix, "mix", "a corpus of a mixture, `FILE=WEIGHT` as read --mix takes it (repeatable, instead of FILE): each is reported, then the mixture's anchor and each corpus's sweep on its timeline")
	fs.Var(&streams, "stream", "stream `NAME:DIM[:sparse]` (repeatable; default: inferred from the file)")
	mb := fs.String("defines-mb-size", "", "the `NAME` of the stream whose lines count as samples (default: every line is a sample)")
	label := fs.String("label", "", "the `NAME` of the stream whose lines epoch sizes count (default: the minibatch-size count)")
	chunkBytesV := byteSize(defaultReadChunkBytes)
	chunkBytes := (*int64)(&chunkBytesV)
	fs.Var(&chunkBytesV, "chunk-bytes", "chunk `size` in bytes, e.g. 1048576 or 32MiB (default: 1MiB, read's; read --randomize cntk uses 32MiB)")
	chunkSeqs := fs.Int("chunk-sequences", 0, "sequences per chunk (instead of --chunk-bytes)")
	maxErrors := fs.Int("max-errors", 0, "bad sequences tolerated before failing")
	format := fs.String("format", "text", "output format: text or json")
	lineMode := fs.Bool("line-mode", false, "force line mode (every line a sequence; ids ignored)")
	cacheIndex := fs.Bool("cache-index", false, "keep the index in FILE.batchprep-index and reuse it while the file is unchanged")
	objects := objectFlags(fs, env)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(mix) > 0 && len(pos) > 0:
		return usagef("--mix replaces FILE: give the corpora as --mix FILE=WEIGHT only")
	case len(mix) == 0 && len(pos) != 1:
		return usagef("want exactly one FILE, got %d arguments", len(pos))
	}
	if *format != "text" && *format != "json" {
		return usagef("--format %q: want text or json", *format)
	}
	if *chunkSeqs != 0 && !flagSet(fs, "chunk-bytes") {
		*chunkBytes = 0 // --chunk-sequences alone replaces the default size
	}
	cfg := ctf.Config{DefinesMBSize: *mb, Label: *label, ChunkBytes: *chunkBytes, ChunkSequences: *chunkSeqs,
		MaxErrors: *maxErrors, LineMode: *lineMode, CacheIndex: *cacheIndex}
	for _, s := range streams {
		st, err := ctf.ParseStreamFlag(s)
		if err != nil {
			return usagef("%v", err)
		}
		cfg.Streams = append(cfg.Streams, st)
	}
	in := newCorpusFiles(env.Ctx, *objects)
	defer in.close()
	if len(mix) > 0 {
		return runInspectMix(env, in, mix, cfg, *format)
	}
	rep, fatal, err := inspectOne(in, pos[0], cfg)
	if err != nil {
		return err
	}
	if *format == "json" {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		rep.text(env.Stdout)
	}
	if fatal != nil {
		return fatal
	}
	return nil
}

// inspectOne reports on one corpus file, CTF or Parquet, its streams given
// in cfg or inferred; fatal is the error that stopped reading (in the
// report), err an error before any reading.
func inspectOne(in corpusFiles, path string, cfg ctf.Config) (rep *inspectReport, fatal, err error) {
	kind, err := in.detect(path)
	if err != nil {
		return nil, nil, err
	}
	if kind == file.Parquet {
		if cfg.LineMode {
			return nil, nil, usagef("--line-mode applies to CTF files; %s is a Parquet file", path)
		}
		return inspectParquet(in, path, cfg)
	}
	if len(cfg.Streams) == 0 {
		return inspectInferred(in, path, cfg, inspectGuessBytes)
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, usagef("%v", err)
	}
	rep, fatal = inspectWith(in, path, cfg, false)
	return rep, fatal, nil
}

// inspectGuessBytes is how much of a file inspect first infers the streams
// from (see inspectInferred).
const inspectGuessBytes = 8 << 20

// inspectInferred reports on a file whose streams are inferred; fatal is as
// inspectWith's, err an error before any reading. Inferring
// them is a scan of the whole file before the index and the parse, a third
// of inspect's work. A clean file needs no such scan: the streams are
// guessed from the first guessBytes (ctf.InferPrefix), the file is
// parsed with every sparse dimension at its largest, and the largest index
// parsed gives the dimension. If that parse says nothing at all (no
// warning, no error), every stream was named in the guess, every value
// parsed as its kind and no dense sample was longer or shorter than the
// guessed dimension, so the full scan would have found the same streams and
// dimensions, and parsing with them finds the same counts and no
// diagnostic: the report is the one the full scan gives. Otherwise (a
// diagnostic stops the guess at once) the streams are inferred from the
// whole file and the file is parsed again.
func inspectInferred(in corpusFiles, path string, cfg ctf.Config, guessBytes int64) (rep *inspectReport, fatal, err error) {
	guess, whole, err := in.inferPrefix(path, guessBytes)
	if err != nil {
		return nil, nil, err
	}
	if !whole && len(guess) > 0 && !cfg.CacheIndex {
		if rep = inspectGuess(in, path, cfg, guess); rep != nil {
			return rep, nil, nil
		}
	}
	if !whole {
		if guess, err = in.inferCTF(path); err != nil {
			return nil, nil, err
		}
	}
	if len(guess) == 0 {
		return nil, nil, fmt.Errorf("%s: no \"|name\" samples found; cannot infer streams (is it a CTF file?)", path)
	}
	cfg.Streams = guess
	if err := cfg.Validate(); err != nil {
		// The file, not the command line, is at fault: a data error.
		return nil, nil, fmt.Errorf("%s: the streams inferred from it cannot be read (is it a CTF file?): %w", path, err)
	}
	rep, fatal = inspectWith(in, path, cfg, true)
	return rep, fatal, nil
}

// inspectGuess is the clean-file case of inspectInferred: the report, or
// nil when the parse with the guessed streams said anything.
func inspectGuess(in corpusFiles, path string, cfg ctf.Config, guess []corpus.Stream) *inspectReport {
	cfg.Streams = slices.Clone(guess)
	for i := range cfg.Streams {
		if cfg.Streams[i].Sparse {
			cfg.Streams[i].Dim = ctf.MaxSparseDim
		}
	}
	if cfg.Validate() != nil {
		return nil
	}
	var said atomic.Bool
	cfg.Warn = func(ctf.Error) { said.Store(true) }
	maxIndex := make([]int32, len(cfg.Streams))
	for i := range maxIndex {
		maxIndex[i] = -1
	}
	rep := newInspectReport(path)
	errSaid := errors.New("a diagnostic")
	fatal := inspectRead(in, path, cfg, rep, func(ch *corpus.Chunk) error {
		if said.Load() {
			return errSaid
		}
		for s, st := range cfg.Streams {
			if st.Sparse {
				for _, x := range ch.Streams[s].Indices {
					maxIndex[s] = max(maxIndex[s], x)
				}
			}
		}
		return nil
	})
	if fatal != nil || said.Load() {
		return nil
	}
	for s := range cfg.Streams {
		if cfg.Streams[s].Sparse {
			cfg.Streams[s].Dim = max(1, int(maxIndex[s])+1)
		}
	}
	rep.setStreams(cfg.Streams, true)
	return rep
}

func newInspectReport(path string) *inspectReport {
	return &inspectReport{File: path, Samples: map[string]int64{}}
}

// setStreams records the streams read and the flags that give them.
func (rep *inspectReport) setStreams(streams []corpus.Stream, inferred bool) {
	rep.Streams, rep.Inferred, rep.DimsLowerBound = nil, inferred, inferred
	var flags []string
	for _, st := range streams {
		rep.Streams = append(rep.Streams, inspectStream{st.Name, st.Dim, st.Sparse})
		flags = append(flags, "--stream "+ctf.FormatStreamFlag(st))
	}
	rep.Flags = strings.Join(flags, " ")
}

// inspectWith reports on path read with cfg's streams; fatal is the error
// that stopped reading, if any, already in the report.
func inspectWith(in corpusFiles, path string, cfg ctf.Config, inferred bool) (rep *inspectReport, fatal error) {
	rep = newInspectReport(path)
	rep.setStreams(cfg.Streams, inferred)
	cfg.Warn = func(e ctf.Error) { rep.add(e) }
	fatal = inspectRead(in, path, cfg, rep, nil)
	if fatal != nil {
		rep.Fatal = fatal.Error()
		var be *ctf.BudgetError
		if errors.As(fatal, &be) && be.Last != nil {
			rep.add(*be.Last)
		}
	}
	return rep, fatal
}

// inspectRead fills rep from the index and every chunk, calling each (if
// not nil) with every chunk in order; it returns the error that stopped
// reading, if any.
func inspectRead(in corpusFiles, path string, cfg ctf.Config, rep *inspectReport, each func(*corpus.Chunk) error) error {
	fr, err := in.open(path, cfg)
	if err != nil {
		return err
	}
	defer fr.Close()
	r, ok := file.CTFOf(fr)
	if !ok {
		return fmt.Errorf("%s: a Parquet file where CTF was expected", path)
	}
	l := r.Layout()
	if err := checkChunkMemory(path, l, cfg.Streams, physicalMemory()); err != nil {
		return err
	}
	rep.setLayout(l)
	defer func() {
		s := r.Summary()
		rep.LineMode = s.LineMode
		rep.Errors = s.BadSequences
		rep.Skipped = s.Skipped
		rep.WarningKinds = s.Warnings
		rep.Warnings = 0
		for _, v := range s.Warnings {
			rep.Warnings += v
		}
		for i, st := range cfg.Streams {
			rep.Samples[st.Name] = s.Samples[i]
		}
	}()
	// Every core parses; diagnostics and the budget see the chunks in order.
	return r.LoadAll(0, func(_ int, ch *corpus.Chunk) error {
		var err error
		if each != nil {
			err = each(ch)
		}
		r.Recycle(ch) // only the counts are kept: the next chunk reuses its arrays
		return err
	})
}

// lengthHistogram bins sequence sample counts by powers of two: 1, 2-3,
// 4-7, ...
func lengthHistogram(l *corpus.Layout) []histBin {
	var counts [33]int
	for _, s := range l.Samples {
		counts[bits.Len32(s)-1]++
	}
	var out []histBin
	for b, n := range counts {
		if n > 0 {
			lo := uint32(1) << b
			out = append(out, histBin{Min: lo, Max: lo*2 - 1, Count: n})
		}
	}
	return out
}

// setLayout fills the report's counts from a corpus's layout: sequences,
// chunks, samples, labels, the length histogram and the chunk sizes.
func (rep *inspectReport) setLayout(l *corpus.Layout) {
	rep.Sequences = l.NumSequences()
	rep.Chunks = l.NumChunks()
	rep.TotalSamples = l.TotalSamples()
	rep.TotalLabels = l.TotalLabels()
	rep.Histogram = lengthHistogram(l)
	for c := 0; c < l.NumChunks(); c++ {
		first, end := l.Chunk(c)
		n := end - first
		if c == 0 || n < rep.ChunkSequences[0] {
			rep.ChunkSequences[0] = n
		}
		rep.ChunkSequences[1] = max(rep.ChunkSequences[1], n)
	}
}

func (rep *inspectReport) add(e ctf.Error) {
	if len(rep.Diagnostics) >= maxListedDiagnostics {
		rep.DiagnosticsLeft++
		return
	}
	sev := "error"
	if ctf.IsWarning(&e) {
		sev = "warning"
	}
	rep.Diagnostics = append(rep.Diagnostics, inspectDiag{sev, ctf.Kind(&e), e.File, e.Line, e.Col, e.Offset, e.Msg})
}

func (rep *inspectReport) text(w io.Writer) {
	fmt.Fprintf(w, "file       %s\n", rep.File)
	if rep.Inferred {
		fmt.Fprintf(w, "streams    inferred from this file; to set them: %s\n", rep.Flags)
		fmt.Fprintf(w, "           the dimensions are lower bounds (the largest seen here): another file of\n")
		fmt.Fprintf(w, "           the same corpus (a train set beside a test set) may need larger ones\n")
	} else {
		fmt.Fprintf(w, "streams    %s\n", rep.Flags)
	}
	for i, l := range rep.LeftOut {
		head := "left out  "
		if i > 0 {
			head = "          "
		}
		fmt.Fprintf(w, "%s column %q %s\n", head, l.Column, l.Reason)
	}
	mode := "sequence ids"
	if rep.Format == string(file.Parquet) {
		mode = fmt.Sprintf("Parquet, one row per sequence, %s", plural.Count(rep.RowGroups, "row group"))
	} else if rep.LineMode {
		mode = "line mode (each line a sequence)"
	}
	fmt.Fprintf(w, "mode       %s\n", mode)
	fmt.Fprintf(w, "sequences  %d\n", rep.Sequences)
	fmt.Fprintf(w, "samples    %d (labels %d)\n", rep.TotalSamples, rep.TotalLabels)
	for _, st := range rep.Streams {
		unit := "line"
		if rep.Format != "" {
			unit = "sample"
		}
		fmt.Fprintf(w, "  %-12s %s\n", st.Name, plural.Count(rep.Samples[st.Name], unit))
	}
	fmt.Fprintf(w, "chunks     %d (%d-%d sequences each)\n", rep.Chunks, rep.ChunkSequences[0], rep.ChunkSequences[1])
	fmt.Fprintf(w, "sequence lengths (samples):\n")
	for _, b := range rep.Histogram {
		fmt.Fprintf(w, "  %6d-%-6d %d\n", b.Min, b.Max, b.Count)
	}
	fmt.Fprintf(w, "errors     %d bad sequences%s\n", rep.Errors, kindList(rep.Skipped))
	fmt.Fprintf(w, "warnings   %d%s\n", rep.Warnings, kindList(rep.WarningKinds))
	for _, d := range rep.Diagnostics {
		fmt.Fprintf(w, "  %s: %s:%d:%d (offset %d): %s [%s]\n", d.Severity, d.File, d.Line, d.Col, d.Offset, d.Message, d.Kind)
	}
	if rep.DiagnosticsLeft > 0 {
		fmt.Fprintf(w, "  ... %d more diagnostics not listed\n", rep.DiagnosticsLeft)
	}
	if rep.Fatal != "" {
		fmt.Fprintf(w, "FAILED     %s\n", rep.Fatal)
	}
}

func kindList(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(" (")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, m[k])
	}
	b.WriteString(")")
	return b.String()
}

// flagSet tells whether the command line set the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
