package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/bits"
	"sort"
	"strings"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/ctf"
)

const inspectDescription = `
Index a CTF file, parse every chunk and report: sequences, samples per
stream, the sequence-length histogram, chunks, and every warning and error
with file, line, column and byte offset.

Without --stream the streams are inferred from a scan (a stream is sparse
when any value is i:v; dense dimension = most values in one sample, sparse
dimension = largest index + 1) and the flags to use are printed.

The inferred dimensions are lower bounds: the largest seen in this file.
Another file of the same corpus (a training set beside a test set) may need
larger ones; give --stream with the dimensions of the whole corpus.

Exit codes: 0 ok (bad sequences within --max-errors are reported, not
fatal), 1 more bad sequences than --max-errors, a file that is not CTF, or
a runtime error, 2 usage.

Examples:
  batchprep inspect corpus.ctf
  batchprep inspect corpus.ctf --format json
  batchprep inspect corpus.ctf --stream S0:943:sparse --stream S1:26:sparse --max-errors 10`

// maxListedDiagnostics bounds the diagnostics listed in the report; all are
// counted.
const maxListedDiagnostics = 100

type inspectReport struct {
	File            string           `json:"file"`
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
	var streams stringList
	fs.Var(&streams, "stream", "stream `NAME:DIM[:sparse]` (repeatable; default: inferred from the file)")
	mb := fs.String("defines-mb-size", "", "the `NAME` of the stream whose lines count as samples (default: every line is a sample)")
	label := fs.String("label", "", "the `NAME` of the stream whose lines epoch sizes count (default: the minibatch-size count)")
	chunkBytesV := byteSize(defaultReadChunkBytes)
	chunkBytes := (*int64)(&chunkBytesV)
	fs.Var(&chunkBytesV, "chunk-bytes", "chunk `size` in bytes, e.g. 1048576 or 32MiB (read's default)")
	chunkSeqs := fs.Int("chunk-sequences", 0, "sequences per chunk (instead of --chunk-bytes)")
	maxErrors := fs.Int("max-errors", 0, "bad sequences tolerated before failing")
	format := fs.String("format", "text", "output format: text or json")
	lineMode := fs.Bool("line-mode", false, "force line mode (every line a sequence; ids ignored)")
	cacheIndex := fs.Bool("cache-index", false, "keep the index in FILE.batchprep-index and reuse it while the file is unchanged")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
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
	rep := &inspectReport{File: pos[0], Samples: map[string]int64{}}
	if len(cfg.Streams) == 0 {
		inferred, err := ctf.InferStreams(pos[0])
		if err != nil {
			return err
		}
		if len(inferred) == 0 {
			return fmt.Errorf("%s: no \"|name\" samples found; cannot infer streams (is it a CTF file?)", pos[0])
		}
		cfg.Streams = inferred
		rep.Inferred, rep.DimsLowerBound = true, true
	}
	if err := cfg.Validate(); err != nil {
		if rep.Inferred {
			// The file, not the command line, is at fault: a data error.
			return fmt.Errorf("%s: the streams inferred from it cannot be read (is it a CTF file?): %w", pos[0], err)
		}
		return usagef("%v", err)
	}
	var flags []string
	for _, st := range cfg.Streams {
		rep.Streams = append(rep.Streams, inspectStream{st.Name, st.Dim, st.Sparse})
		flags = append(flags, "--stream "+ctf.FormatStreamFlag(st))
	}
	rep.Flags = strings.Join(flags, " ")
	cfg.Warn = func(e ctf.Error) { rep.add(e) }
	fatal := inspectRead(pos[0], cfg, rep)
	if fatal != nil {
		rep.Fatal = fatal.Error()
		var be *ctf.BudgetError
		if errors.As(fatal, &be) && be.Last != nil {
			rep.add(*be.Last)
		}
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

// inspectRead fills rep from the index and every chunk; it returns the error
// that stopped reading, if any.
func inspectRead(path string, cfg ctf.Config, rep *inspectReport) error {
	r, err := ctf.Open(path, cfg)
	if err != nil {
		return err
	}
	defer r.Close()
	l := r.Layout()
	if err := checkChunkMemory(path, l, cfg.Streams, physicalMemory()); err != nil {
		return err
	}
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
		r.Recycle(ch) // only the counts are kept: the next chunk reuses its arrays
		return nil
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
	mode := "sequence ids"
	if rep.LineMode {
		mode = "line mode (each line a sequence)"
	}
	fmt.Fprintf(w, "mode       %s\n", mode)
	fmt.Fprintf(w, "sequences  %d\n", rep.Sequences)
	fmt.Fprintf(w, "samples    %d (labels %d)\n", rep.TotalSamples, rep.TotalLabels)
	for _, st := range rep.Streams {
		fmt.Fprintf(w, "  %-12s %d lines\n", st.Name, rep.Samples[st.Name])
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
