package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/internal/shared"
)

// tinyCTF writes the contract checker's corpus: 30 sequences (ids 100..129)
// of 1..3 lines, stream x dense 2 on every line, y dense 1 on the first.
func tinyCTF(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < 30; i++ {
		for j := 0; j < 1+i%3; j++ {
			fmt.Fprintf(&b, "%d |x %d %d", 100+i, i, j)
			if j == 0 {
				b.WriteString(" |y 1")
			}
			b.WriteString("\n")
		}
	}
	p := filepath.Join(t.TempDir(), "tiny.ctf")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type readRec struct {
	Step       uint64         `json:"step"`
	Epoch      int            `json:"epoch"`
	Sweep      uint64         `json:"sweep"`
	Start      uint64         `json:"start"`
	End        uint64         `json:"end"`
	EndOfSweep bool           `json:"end_of_sweep"`
	EndOfEpoch bool           `json:"end_of_epoch"`
	Sequences  []int          `json:"sequences"`
	IDs        []string       `json:"ids"`
	Samples    map[string]int `json:"samples"`
	Skipped    []int          `json:"skipped"`
}

func parseJSONL(t *testing.T, out string) []readRec {
	t.Helper()
	var recs []readRec
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		var r readRec
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("line %d %q: %v", i+1, line, err)
		}
		recs = append(recs, r)
	}
	return recs
}

func mustRead(t *testing.T, args ...string) ([]readRec, string) {
	t.Helper()
	code, out, errOut := run(t, append([]string{"read"}, args...)...)
	if code != 0 {
		t.Fatalf("read %v: exit %d: %s", args, code, errOut)
	}
	return parseJSONL(t, out), errOut
}

// TestReadContract checks SPEC A6 on the contract checker's corpus: every
// line a JSON object with the fields, one sweep lists each ordinal once,
// ids as written, per-stream sample counts.
func TestReadContract(t *testing.T) {
	p := tinyCTF(t)
	recs, _ := mustRead(t, p, "--stream", "x:2", "--stream", "y:1", "--mb", "7", "--format", "jsonl")
	var all []int
	var pos uint64
	for i, r := range recs {
		if r.Step != uint64(i) || r.Start != pos || r.Epoch != 0 || r.Sweep != 0 {
			t.Fatalf("record %d: %+v", i, r)
		}
		pos = r.End
		if len(r.IDs) != len(r.Sequences) || r.Samples["y"] != len(r.Sequences) {
			t.Fatalf("record %d: %+v", i, r)
		}
		x := 0
		for k, s := range r.Sequences {
			if r.IDs[k] != fmt.Sprint(100+s) {
				t.Fatalf("sequence %d has id %q", s, r.IDs[k])
			}
			x += 1 + s%3
		}
		if r.Samples["x"] != x || uint64(x) != r.End-r.Start || x > 7 && len(r.Sequences) > 1 {
			t.Fatalf("record %d: x samples %d, span %d", i, r.Samples["x"], r.End-r.Start)
		}
		all = append(all, r.Sequences...)
	}
	last := recs[len(recs)-1]
	if !last.EndOfSweep || !last.EndOfEpoch || last.End != 60 {
		t.Errorf("last record %+v", last)
	}
	sort.Ints(all)
	for i, s := range all {
		if s != i {
			t.Fatalf("sweep lists %v", all)
		}
	}
}

// TestReadResume: --max-minibatches with --state-out, then --state-in,
// gives exactly the uninterrupted output (steps continue), across an epoch
// end and with a different number of workers for the second part.
func TestReadResume(t *testing.T) {
	p := tinyCTF(t)
	base := []string{p, "--stream", "x:2", "--stream", "y:1", "--mb", "4*2:9", "--epoch-size", "25", "--epochs", "4",
		"--randomize", "window", "--window-chunks", "2", "--chunk-sequences", "3", "--seed", "7"}
	full, _ := mustRead(t, base...)
	if len(full) < 10 {
		t.Fatalf("only %d minibatches", len(full))
	}
	st := filepath.Join(t.TempDir(), "state.json")
	for _, cut := range []int{1, 5, len(full) - 1} {
		first, _ := mustRead(t, append(base, "--max-minibatches", fmt.Sprint(cut), "--state-out", st)...)
		rest, _ := mustRead(t, append(base, "--state-in", st)...)
		if got := append(first, rest...); !reflect.DeepEqual(got, full) {
			t.Fatalf("cut %d: resumed run differs:\n%v\n%v", cut, got, full)
		}
		// Two ranks from the same state: their union is the single-rank rest.
		r0, _ := mustRead(t, append(base, "--state-in", st, "--workers", "2", "--rank", "0")...)
		r1, _ := mustRead(t, append(base, "--state-in", st, "--workers", "2", "--rank", "1")...)
		if len(r0) != len(rest) || len(r1) != len(rest) {
			t.Fatalf("cut %d: ranks read %d and %d minibatches, want %d", cut, len(r0), len(r1), len(rest))
		}
		for i := range rest {
			u := append(append([]int{}, r0[i].Sequences...), r1[i].Sequences...)
			if r0[i].Start != rest[i].Start || r1[i].End != rest[i].End || !reflect.DeepEqual(u, rest[i].Sequences) {
				t.Fatalf("cut %d step %d: ranks %v + %v != %v", cut, i, r0[i].Sequences, r1[i].Sequences, rest[i].Sequences)
			}
		}
	}
	// A different seed refuses the state and names the field with both values.
	other := append([]string{"read"}, base[:len(base)-1]...)
	code, _, errOut := run(t, append(other, "8", "--state-in", st)...)
	if code != 1 || !strings.Contains(errOut, `seed: state "7", now "8"`) {
		t.Errorf("seed mismatch: exit %d, %s", code, errOut)
	}
	os.WriteFile(st, []byte(`{"version":1,"position":`), 0o644)
	code, _, errOut = run(t, append(append([]string{"read"}, base...), "--state-in", st)...)
	if code != 1 || !strings.Contains(errOut, "truncated") {
		t.Errorf("truncated state: exit %d, %s", code, errOut)
	}
}

// TestReadStart: --start rounds up to a boundary and counts steps from 0.
func TestReadStart(t *testing.T) {
	p := tinyCTF(t)
	base := []string{p, "--stream", "x:2", "--stream", "y:1", "--mb", "5", "--epoch-size", "inf", "--randomize", "none", "--max-minibatches", "3"}
	recs, _ := mustRead(t, append(base, "--start", "62")...) // sweep 1, inside sequence 1 (offsets 1..2)
	if recs[0].Step != 0 || recs[0].Start != 63 || recs[0].Sweep != 1 || recs[0].Sequences[0] != 2 {
		t.Errorf("--start 62: %+v", recs[0])
	}
}

// cancelAfter is a context whose Err turns to Canceled after n calls.
type cancelAfter struct {
	context.Context
	n atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestReadInterrupt: a cancelled context stops after the current minibatch
// and still writes --state-out, which resumes the rest exactly.
func TestReadInterrupt(t *testing.T) {
	p := tinyCTF(t)
	base := []string{p, "--stream", "x:2", "--stream", "y:1", "--mb", "6", "--randomize", "cntk", "--chunk-sequences", "4"}
	full, _ := mustRead(t, base...)
	st := filepath.Join(t.TempDir(), "s.json")
	ctx := &cancelAfter{Context: context.Background()}
	ctx.n.Store(3)
	var o, e bytes.Buffer
	err := runRead(&Env{Ctx: ctx, Stdout: &o, Stderr: &e}, append(base, "--state-out", st))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	first := parseJSONL(t, o.String())
	if len(first) != 3 {
		t.Fatalf("interrupted run printed %d minibatches, want 3", len(first))
	}
	rest, _ := mustRead(t, append(base, "--state-in", st)...)
	if !reflect.DeepEqual(append(first, rest...), full) {
		t.Error("resume after interrupt differs")
	}
}

// TestReadSkipped: a bad sequence within --max-errors keeps its positions,
// is listed in "skipped" and summarized on stderr; past the budget the
// read fails naming file and line.
func TestReadSkipped(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.ctf")
	os.WriteFile(p, []byte("1 |x 1 2\n2 |x 3 zz\n3 |x 5 6\n"), 0o644)
	recs, errOut := mustRead(t, p, "--stream", "x:2", "--mb", "10", "--max-errors", "1", "--randomize", "none")
	if len(recs) != 1 || !reflect.DeepEqual(recs[0].Sequences, []int{0, 2}) || !reflect.DeepEqual(recs[0].Skipped, []int{1}) || recs[0].End != 3 {
		t.Errorf("records %+v", recs)
	}
	if !strings.Contains(errOut, "bad sequences found: 1 (number=1); 1 skipped") || !strings.Contains(errOut, "bad.ctf:2") {
		t.Errorf("stderr %q", errOut)
	}
	code, _, errOut := run(t, "read", p, "--stream", "x:2", "--mb", "10", "--randomize", "none")
	if code != 1 || !strings.Contains(errOut, "bad.ctf") {
		t.Errorf("no budget: exit %d, %s", code, errOut)
	}
}

func TestReadFormats(t *testing.T) {
	p := tinyCTF(t)
	code, out, _ := run(t, "read", p, "--stream", "x:2", "--stream", "y:1", "--mb", "7", "--format", "text")
	if code != 0 || strings.Count(out, "\n") != 9 || !strings.HasPrefix(out, "step 0 epoch 0 sweep 0 [0, ") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "read", p, "--stream", "x:2", "--stream", "y:1", "--mb", "7", "--format", "summary")
	for _, want := range []string{"minibatches: 9\n", "sequences: 30\n", "samples: 60\n", "samples y: 30\n", "seconds: ", "samples/s: "} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func TestReadUsageErrors(t *testing.T) {
	p := tinyCTF(t)
	s := []string{"read", p, "--stream", "x:2"}
	cases := map[string][]string{
		"at least one --stream":       {"read", p},
		"exactly one CORPUS":          {"read", "--stream", "x:2"},
		`token 2 "x"`:                 append(s, "--mb", "4:x"),
		"--epoch-size":                append(s, "--epoch-size", "zero"),
		"exclude each other":          append(s, "--window-chunks", "3", "--window-samples", "9"),
		"--rank 2":                    append(s, "--workers", "2", "--rank", "2"),
		"--format":                    append(s, "--format", "xml"),
		"--randomize":                 append(s, "--randomize", "shuffle"),
		"--start and --state-in":      append(s, "--start", "3", "--state-in", "x.json"),
		"--chunk-bytes and --chunk-s": append(s, "--chunk-bytes", "9", "--chunk-sequences", "2"),
		"--epochs 0":                  append(s, "--epochs", "0"),
		"--memory-limit":              append(s, "--memory-limit", "lots"),
	}
	for want, args := range cases {
		code, _, errOut := run(t, args...)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", args[2:], code, errOut, want)
		}
	}
}

// TestReadATIS: one sweep of ATIS (4,978 sequences, 66,547 lines) with the
// default window randomizer and small chunks lists every ordinal once, the
// intent stream S1 has one sample per sequence, and two ranks split every
// step.
func TestReadATIS(t *testing.T) {
	p := shared.Need(t, "ctf", "atis", "atis.train.ctf")
	args := []string{p, "--stream", "S0:943:sparse", "--stream", "S1:26:sparse", "--stream", "S2:129:sparse",
		"--mb", "2000", "--chunk-bytes", "200000", "--window-chunks", "4"}
	recs, _ := mustRead(t, args...)
	seen := map[int]bool{}
	var s1 int
	for _, r := range recs {
		for _, o := range r.Sequences {
			if seen[o] {
				t.Fatalf("sequence %d twice", o)
			}
			seen[o] = true
		}
		s1 += r.Samples["S1"]
	}
	if len(seen) != 4978 || s1 != 4978 || recs[len(recs)-1].End != 66547 {
		t.Fatalf("%d sequences, %d S1 samples, end %d", len(seen), s1, recs[len(recs)-1].End)
	}
	r1, _ := mustRead(t, append(args, "--workers", "2", "--rank", "1")...)
	if len(r1) != len(recs) {
		t.Fatalf("rank 1 read %d minibatches, want %d", len(r1), len(recs))
	}
	for i := range recs {
		n := len(r1[i].Sequences)
		if n == 0 || n >= len(recs[i].Sequences) || !reflect.DeepEqual(r1[i].Sequences, recs[i].Sequences[len(recs[i].Sequences)-n:]) {
			t.Fatalf("step %d: rank 1 has %d of %d sequences, not the tail", i, n, len(recs[i].Sequences))
		}
	}
}

// TestReadMemoryLimit: --memory-limit parses auto, off and sizes, sets the
// runtime's soft limit for the read (auto: window + 64 MiB) and
// puts the previous limit back afterwards.
func TestReadMemoryLimit(t *testing.T) {
	for v, want := range map[string]int64{"off": 0, "0": 0, "123": 123, "2KiB": 2048, "3MiB": 3 << 20, "1GiB": 1 << 30} {
		got, auto, err := parseMemoryLimit(v)
		if err != nil || auto || got != want {
			t.Errorf("parseMemoryLimit(%q) = %d, %v, %v; want %d", v, got, auto, err, want)
		}
	}
	if _, auto, err := parseMemoryLimit("auto"); !auto || err != nil {
		t.Errorf("auto: %v, %v", auto, err)
	}
	for _, v := range []string{"", "-1", "1TiB", "MiB", "1.5GiB", "9999999999GiB"} {
		if _, _, err := parseMemoryLimit(v); err == nil {
			t.Errorf("parseMemoryLimit(%q) accepted", v)
		}
	}
	before := debug.SetMemoryLimit(-1)
	p := tinyCTF(t)
	mustRead(t, p, "--stream", "x:2", "--stream", "y:1", "--memory-limit", "7MiB")
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("limit after the read %d, want the previous %d", got, before)
	}
	// While reading, the limit in force is the one asked for.
	var during int64
	readLimitHook = func() { during = debug.SetMemoryLimit(-1) }
	defer func() { readLimitHook = nil }()
	mustRead(t, p, "--stream", "x:2", "--stream", "y:1", "--memory-limit", "7MiB")
	if during != 7<<20 {
		t.Fatalf("limit during the read %d, want %d", during, 7<<20)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		mustRead(t, p, "--stream", "x:2", "--stream", "y:1")
		if during < source.Headroom-source.ProcessReserve || during >= 1<<40 {
			t.Fatalf("auto limit %d: want window + 64 MiB - 8 MiB (or more for a large index)", during)
		}
	}
}

// TestReadLimitFollowsLiveHeap: the automatic limit never stays just above
// the live heap: once live data leave less than a quarter of their size
// under it (a window of parsed chunks larger than the text that sized the
// limit, or an index of many short sequences), it is raised to the live
// data and half of them; an explicit --memory-limit is never raised.
func TestReadLimitFollowsLiveHeap(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	var raised atomic.Int64
	readRaiseHook = func(l int64) { raised.Store(l) }
	defer func() { readRaiseHook = nil }()
	const small = 16 << 20
	debug.SetMemoryLimit(small)
	stop := followLive(small)
	live := make([]byte, 96<<20) // live data six times the limit
	for i := range live {
		live[i] = byte(i)
	}
	runtime.GC()
	for deadline := time.Now().Add(10 * time.Second); raised.Load() < 96<<20*3/2 && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	runtime.KeepAlive(live)
	if got := debug.SetMemoryLimit(-1); raised.Load() < 96<<20*3/2 || got != raised.Load() {
		t.Fatalf("limit %d MiB after 96 MiB of live data (last raise %d MiB), want at least 144 MiB", got>>20, raised.Load()>>20)
	}
	// An explicit limit stays as given.
	raised.Store(0)
	p := tinyCTF(t)
	mustRead(t, p, "--stream", "x:2", "--stream", "y:1", "--memory-limit", "1MiB")
	if raised.Load() != 0 {
		t.Fatalf("--memory-limit 1MiB was raised to %d", raised.Load())
	}
}

// TestReadStateFingerprintCompatible: since the reader fingerprints itself
// (ctf.Reader.Fingerprint), the state's corpus entries must still be the
// ones the first releases of `batchprep read` wrote (size, SHA-256 of the first and last
// 64 KiB, mb-size and label streams, chunking), so old state files resume.
// The expected values are computed here from the file's bytes.
func TestReadStateFingerprintCompatible(t *testing.T) {
	dir := t.TempDir()
	for _, lines := range []int{40, 20000} { // below and above 128 KiB
		var b strings.Builder
		for i := 0; i < lines; i++ {
			fmt.Fprintf(&b, "%d |x %d 0.5\n", i/3, i)
		}
		p := filepath.Join(dir, fmt.Sprintf("c%d.ctf", lines))
		data := []byte(b.String())
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		const edge = 64 << 10
		h := sha256.New()
		h.Write(data[:min(edge, len(data))])
		if len(data) > edge {
			h.Write(data[len(data)-min(edge, len(data)-edge):])
		}
		want := map[string]string{
			"corpus.file_size":         fmt.Sprint(len(data)),
			"corpus.file_edges_sha256": hex.EncodeToString(h.Sum(nil))[:32],
			"corpus.defines_mb_size":   "",
			"corpus.label":             "",
			"corpus.chunking":          "5 sequences",
		}
		st := filepath.Join(dir, "state.json")
		mustRead(t, p, "--stream", "x:2", "--chunk-sequences", "5", "--max-minibatches", "1", "--state-out", st)
		raw, err := os.ReadFile(st)
		if err != nil {
			t.Fatal(err)
		}
		var state struct{ Fingerprint map[string]string }
		if err := json.Unmarshal(raw, &state); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for k, v := range state.Fingerprint {
			if strings.HasPrefix(k, "corpus.") {
				got[k] = v
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d lines: corpus fingerprint %v, want %v", lines, got, want)
		}
	}
}

// FuzzParseMemoryLimit: the --memory-limit parser never panics, accepts only
// auto, off/0 or a positive size, and a size it accepts is the number times
// its unit.
func FuzzParseMemoryLimit(f *testing.F) {
	for _, s := range []string{"auto", "off", "0", "512MiB", "2GiB", "7KiB", "123", "-1", "1.5GiB", "MiB", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		n, auto, err := parseMemoryLimit(v)
		if err != nil {
			if n != 0 || auto {
				t.Fatalf("%q: error %v with %d, %v", v, err, n, auto)
			}
			return
		}
		switch {
		case v == "auto":
			if !auto || n != 0 {
				t.Fatalf("auto gave %d, %v", n, auto)
			}
		case v == "off" || v == "0":
			if auto || n != 0 {
				t.Fatalf("%q gave %d, %v", v, n, auto)
			}
		default:
			if auto || n < 1 {
				t.Fatalf("%q accepted as %d, %v", v, n, auto)
			}
			unit := int64(1)
			num := v
			for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
				if strings.HasSuffix(v, suffix) {
					num, unit = strings.TrimSuffix(v, suffix), m
				}
			}
			if fmt.Sprint(n/unit) != strings.TrimLeft(strings.TrimPrefix(num, "+"), "0") || n%unit != 0 {
				t.Fatalf("%q parsed as %d", v, n)
			}
		}
	})
}

// --cache-index writes the index beside the corpus on the first read and
// reuses it on the next; the minibatches are the same with and without it.
func TestReadCacheIndex(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.ctf")
	var sb strings.Builder
	for i := 0; i < 40; i++ {
		for j := 0; j <= i%3; j++ {
			fmt.Fprintf(&sb, "%d |x %d\n", i, j)
		}
	}
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"read", p, "--stream", "x:1", "--mb", "5", "--chunk-sequences", "4", "--format", "jsonl", "--quiet"}
	code, plain, errOut := run(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for i := 0; i < 2; i++ {
		code, out, errOut := run(t, append(args, "--cache-index")...)
		if code != 0 || out != plain {
			t.Fatalf("run %d with --cache-index: exit %d, same output %v: %s", i, code, out == plain, errOut)
		}
		if _, err := os.Stat(p + ".batchprep-index"); err != nil {
			t.Fatalf("run %d: no index cache: %v", i, err)
		}
	}
}

// --cache-index keeps a Parquet file's counts beside it on the first read,
// and the next read opens from them (the file is not rewritten); the
// minibatches are the same with and without them.
func TestReadCacheIndexParquet(t *testing.T) {
	dir := t.TempDir()
	ctfPath, p := filepath.Join(dir, "c.ctf"), filepath.Join(dir, "c.parquet")
	var sb strings.Builder
	for i := 0; i < 40; i++ {
		for j := 0; j <= i%3; j++ {
			fmt.Fprintf(&sb, "%d |x %d\n", i, j)
		}
	}
	os.WriteFile(ctfPath, []byte(sb.String()), 0o644)
	if code, _, errOut := run(t, "convert", ctfPath, p, "--stream", "x:1"); code != 0 {
		t.Fatal(errOut)
	}
	args := []string{"read", p, "--stream", "x:1", "--mb", "5", "--chunk-sequences", "4", "--format", "jsonl", "--quiet"}
	code, plain, errOut := run(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var kept os.FileInfo
	for i := 0; i < 2; i++ {
		code, out, errOut := run(t, append(args, "--cache-index")...)
		if code != 0 || out != plain || errOut != "" {
			t.Fatalf("run %d with --cache-index: exit %d, same output %v: %s", i, code, out == plain, errOut)
		}
		info, err := os.Stat(p + ".batchprep-index")
		if err != nil {
			t.Fatalf("run %d: no counts kept: %v", i, err)
		}
		if i == 1 && !os.SameFile(info, kept) {
			t.Error("the second run wrote the counts again instead of opening from them")
		}
		kept = info
	}
	check := []string{"verify", "--index-cache", p, "--stream", "x:1", "--chunk-sequences", "4"}
	if code, out, errOut := run(t, check...); code != 0 || !strings.Contains(out, "index cache matches") {
		t.Errorf("verify --index-cache: exit %d: %s%s", code, out, errOut)
	}
	data, _ := os.ReadFile(p + ".batchprep-index")
	data[len(data)-9] ^= 1
	os.WriteFile(p+".batchprep-index", data, 0o644)
	if code, out, _ := run(t, check...); code != 1 || !strings.Contains(out, p+".batchprep-index") {
		t.Errorf("verify --index-cache of damaged counts: exit %d: %s", code, out)
	}
	code, out, errOut := run(t, append(args, "--cache-index")...)
	if code != 0 || out != plain || !strings.Contains(errOut, "not used") || !strings.Contains(errOut, p+".batchprep-index") {
		t.Errorf("read with damaged counts: exit %d, same output %v: %s", code, out == plain, errOut)
	}
}
