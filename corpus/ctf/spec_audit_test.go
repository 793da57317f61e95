package ctf

// SPEC conformance audit (docs/spec-conformance.md): checks of SPEC A1.1 and
// A1.3 computed independently of the parser: the number grammar from a
// regular expression, diagnostic positions from the file's own bytes.

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/shared"
)

// auditNumber is SPEC A1.1's number grammar [+-]d[.d][e[+-]d] with CNTK's
// rules: digits before the point are required, "45." is fine, an exponent
// after a bare point ("45.e3") is not.
var auditNumber = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+([eE][+-]?[0-9]+)?|\.|([eE][+-]?[0-9]+))?$`)

// SPEC A1.1: a dense value is accepted exactly when it matches the grammar,
// with the float32 value of the text; everything else is a bad sequence.
func TestAuditNumberGrammar(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const alphabet = "0123456789+-.eE0123456789finaxE"
	var toks []string
	seen := map[string]bool{}
	for _, s := range []string{"45.", ".5", "inf", "nan", "1.0f", "-0", "+3", "1e5", "1E-2", "45.e3", "5e", "-.5", "00.50", "1..2", "1e+"} {
		seen[s] = true
		toks = append(toks, s)
	}
	for len(toks) < 3000 {
		n := 1 + rng.IntN(6)
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		if seen[s] {
			continue
		}
		if v, err := strconv.ParseFloat(s, 32); auditNumber.MatchString(s) && (err != nil || math.IsInf(v, 0)) {
			continue // out of float32 range: not what this test is about
		}
		seen[s] = true
		toks = append(toks, s)
	}
	var file strings.Builder
	for i, s := range toks {
		fmt.Fprintf(&file, "%d |x %s\n", i, s)
	}
	r := auditOpen(t, file.String(), Config{Streams: []corpus.Stream{{Name: "x", Dim: 1}}, MaxErrors: len(toks),
		ChunkSequences: len(toks)}, nil)
	ch, err := r.LoadChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	x := ch.Streams[0]
	for i, s := range toks {
		ok := auditNumber.MatchString(s)
		if got := ch.BadAt(i) == nil; got != ok {
			t.Errorf("%q: accepted %v, the grammar says %v (%v)", s, got, ok, ch.BadAt(i))
			continue
		}
		if !ok {
			if !errors.Is(ch.BadAt(i), ErrNumber) && !errors.Is(ch.BadAt(i), ErrSyntax) {
				t.Errorf("%q: error %v is not a number or syntax error", s, ch.BadAt(i))
			}
			continue
		}
		want, _ := strconv.ParseFloat(s, 32)
		if got := x.Dense[x.SeqStart[i]]; got != float32(want) {
			t.Errorf("%q: value %v, want %v", s, got, float32(want))
		}
	}
}

// SPEC A1.3: every diagnostic (warnings and skipped sequences) names the
// file, a 1-based line and column and the byte offset, and they agree with
// the file's bytes: the offset lies on that line, at that column.
func TestAuditDiagnosticPositions(t *testing.T) {
	body := "\xEF\xBB\xBF1 |a 1 2 |b 0:1\r\n" + // BOM, CRLF
		"1 |a 1 |b 0:1 |zz 4\n" + // unknown stream: warning
		"2 |a 1 2 3 |b 0:1\n" + // dense too long
		"3 |a 1 |b 7:1\n" + // sparse index >= dim
		"4 |a 1 |b 0:x\n" + // bad sparse value
		"5 |a 1.5f |b 0:1\n" + // bad number
		"6 |a |b 1:1\n" + // dense short: warning
		"7 |a 1 |b 0:1 |b 1:1\n" + // stream twice on one row
		"8 |b 0:1\n" + // stream a empty in the sequence
		"9 |a 1 |b 0\n" + // sparse entry without ':'
		"10 |a 1 |b 2:1" // no final newline: warning
	var diags []Error
	cfg := Config{Streams: []corpus.Stream{{Name: "a", Dim: 2}, {Name: "b", Dim: 3, Sparse: true}}, MaxErrors: 100}
	r := auditOpen(t, body, cfg, &diags)
	for _, ch := range loadAll(t, r) {
		for _, e := range ch.Bad {
			if e != nil {
				diags = append(diags, *auditAsError(t, e))
			}
		}
	}
	lineStart := []int{0}
	for i := 0; i < len(body); i++ {
		if body[i] == '\n' {
			lineStart = append(lineStart, i+1)
		}
	}
	lines := map[int64]bool{}
	for _, d := range diags {
		if d.File == "" || d.Line < 1 || d.Col < 1 || int(d.Line) > len(lineStart) {
			t.Errorf("diagnostic without a position: %+v", d)
			continue
		}
		start := lineStart[d.Line-1]
		if int(d.Offset) != start+d.Col-1 {
			t.Errorf("%v: offset %d is not line %d column %d (line starts at %d)", &d, d.Offset, d.Line, d.Col, start)
		}
		if !strings.Contains(d.Msg, "expect") && !IsWarning(d.Err) {
			t.Errorf("%v: does not say what was expected", &d)
		}
		lines[d.Line] = true
	}
	for _, l := range []int64{2, 3, 4, 5, 6, 7, 8, 9, 10, 11} {
		if !lines[l] {
			t.Errorf("no diagnostic names line %d; got %v", l, diags)
		}
	}
	if s := r.Summary(); s.BadSequences != 7 {
		t.Errorf("summary counts %d bad sequences, want 7: %+v", s.BadSequences, s)
	}
}

// SPEC A1.3 ("every diagnostic names file, line, column and byte offset";
// nothing dropped silently): in line mode with defines_mb_size, a skipped
// line is reported, and the report says which line.
func TestAuditSkippedLineNamesItsLine(t *testing.T) {
	var warns []Error
	r := auditOpen(t, "|a 1 |b 1\n|a 2\n|a 3 |b 3\n|a 4\n", Config{Streams: []corpus.Stream{{Name: "a", Dim: 1}, {Name: "b", Dim: 1}},
		DefinesMBSize: "b"}, &warns)
	_ = r
	named := map[int64]bool{}
	for _, w := range warns {
		if errors.Is(w.Err, ErrSkippedLine) {
			if w.Line < 1 || w.Col < 1 {
				t.Errorf("skipped-line diagnostic without a position: %v", &w)
			}
			named[w.Line] = true
		}
	}
	if !named[2] || !named[4] {
		t.Errorf("skipped lines 2 and 4 not named: %v", warns)
	}
}

// SPEC A1.4 and A1.2 on real data: chunk boundaries by bytes (a new chunk
// when the next sequence would overflow it) and per-sequence sample and
// label counts, recomputed from the raw bytes of ATIS.
func TestAuditChunkBytesATIS(t *testing.T) {
	dir := shared.Need(t, "ctf", "atis")
	path := filepath.Join(dir, "atis.train.ctf")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var seqBytes, seqLines, seqS1 []int
	prev := ""
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if line == "" {
			continue
		}
		i := 0
		for i < len(line) && line[i] >= '0' && line[i] <= '9' {
			i++
		}
		if id := line[:i]; id != "" && id != prev {
			seqBytes, seqLines, seqS1 = append(seqBytes, 0), append(seqLines, 0), append(seqS1, 0)
			prev = id
		}
		k := len(seqBytes) - 1
		seqBytes[k] += len(line)
		seqLines[k]++
		if strings.Contains(line, "|S1 ") {
			seqS1[k]++
		}
	}
	streams := []corpus.Stream{{Name: "S0", Dim: 943, Sparse: true}, {Name: "S1", Dim: 26, Sparse: true}, {Name: "S2", Dim: 129, Sparse: true}}
	for _, cb := range []int64{1, 5000, 100000, 1 << 20, 32 << 20} {
		var want []int
		cur := int64(0)
		for i, b := range seqBytes {
			if i == 0 || cur+int64(b) > cb {
				want = append(want, i)
				cur = 0
			}
			cur += int64(b)
		}
		want = append(want, len(seqBytes))
		r, err := Open(path, Config{Streams: streams, ChunkBytes: cb, Label: "S1"})
		if err != nil {
			t.Fatal(err)
		}
		l := r.Layout()
		defer r.Close() // the layout's tables are read until Close
		if !reflect.DeepEqual(l.ChunkStart, want) {
			t.Errorf("chunk bytes %d: %d chunks, want %d", cb, l.NumChunks(), len(want)-1)
		}
		for i := range seqLines {
			if int(l.Samples[i]) != seqLines[i] || int(l.LabelCount(i)) != seqS1[i] {
				t.Fatalf("sequence %d: samples %d labels %d, want %d %d", i, l.Samples[i], l.LabelCount(i), seqLines[i], seqS1[i])
			}
		}
	}
}

// auditOpen writes content to a temporary file and indexes it with cfg;
// warnings go to *warns.
func auditOpen(t *testing.T, content string, cfg Config, warns *[]Error) *Reader {
	t.Helper()
	if warns != nil {
		cfg.Warn = func(e Error) { *warns = append(*warns, e) }
	}
	p := filepath.Join(t.TempDir(), "audit.ctf")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(p, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func auditAsError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *ctf.Error", err, err)
	}
	return e
}
