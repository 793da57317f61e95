package ctf

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/shared"
)

// badCorpus has n one-line sequences; those in bad have a malformed number.
func badCorpus(n int, bad map[int]bool) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if bad[i] {
			fmt.Fprintf(&b, "%d |a x%d\n", i, i)
		} else {
			fmt.Fprintf(&b, "%d |a %d\n", i, i)
		}
	}
	return b.String()
}

// Invariant 8: each bad sequence is charged once, however often its chunk
// is reloaded; the budget allows exactly MaxErrors.
func TestBudgetChargesOncePerSequence(t *testing.T) {
	bad := map[int]bool{3: true, 17: true, 18: true}
	in := badCorpus(40, bad)
	cfg := Config{Streams: []corpus.Stream{dense("a", 1)}, ChunkSequences: 5, MaxErrors: 3}
	var warns []Error
	r := openString(t, in, cfg, &warns)
	for sweep := 0; sweep < 5; sweep++ {
		for c := r.Layout().NumChunks() - 1; c >= 0; c-- {
			ch, err := r.LoadChunk(c)
			if err != nil {
				t.Fatalf("sweep %d chunk %d: %v", sweep, c, err)
			}
			for i, b := range ch.Bad {
				if (b != nil) != bad[ch.First+i] {
					t.Errorf("sequence %d: bad=%v", ch.First+i, b)
				}
			}
		}
	}
	s := r.Summary()
	if s.BadSequences != 3 || s.Skipped["number"] != 3 || len(warns) != 3 {
		t.Errorf("after 5 sweeps: %+v, %d warnings; want 3 bad sequences charged once", s, len(warns))
	}

	cfg.MaxErrors = 2
	r = openString(t, in, cfg, nil)
	var err error
	for c := 0; c < r.Layout().NumChunks() && err == nil; c++ {
		_, err = r.LoadChunk(c)
	}
	var be *BudgetError
	if !errors.As(err, &be) || !errors.Is(err, ErrTooManyErrors) || !errors.Is(err, ErrNumber) || be.Last.Line != 19 {
		t.Fatalf("budget 2: got %v, want a BudgetError at line 19", err)
	}
	if _, err2 := r.LoadChunk(0); !errors.Is(err2, ErrTooManyErrors) {
		t.Errorf("after the budget failed, LoadChunk(0) = %v", err2)
	}
}

// Invariant 8 with ParseChunk: parsing charges and reports nothing; each
// commit charges as LoadChunk would at that moment, so commits made in
// reverse chunk order find the budget's end in reverse order too, and a
// parse never committed is never charged.
func TestParseChunkDefersTheBudget(t *testing.T) {
	bad := map[int]bool{3: true, 17: true, 18: true}
	cfg := Config{Streams: []corpus.Stream{dense("a", 1)}, ChunkSequences: 5, MaxErrors: 1}
	var warns []Error
	r := openString(t, badCorpus(40, bad), cfg, &warns)
	commits := make([]func() error, r.Layout().NumChunks())
	for c := range commits {
		ch, commit, err := r.ParseChunk(c)
		if err != nil {
			t.Fatal(err)
		}
		r.Recycle(ch) // commit must not read the chunk
		commits[c] = commit
	}
	if s := r.Summary(); s.BadSequences != 0 || len(warns) != 0 {
		t.Fatalf("after parsing only: %d charged, %d warnings; want none", s.BadSequences, len(warns))
	}
	if err := commits[2](); err != nil { // chunk 2 has none
		t.Fatal(err)
	}
	if err := commits[3](); err != nil { // 17 and 18: one too many
		var be *BudgetError
		if !errors.As(err, &be) || be.Last.Line != 19 {
			t.Fatalf("commit of chunk 3: %v, want the budget error at line 19 (sequence 18)", err)
		}
	} else {
		t.Fatal("commit of chunk 3 (two bad sequences, budget 1) succeeded")
	}
	if len(warns) != 1 || warns[0].Line != 18 {
		t.Errorf("warnings %v, want sequence 17's only", warns)
	}
	if err := commits[0](); !errors.Is(err, ErrTooManyErrors) {
		t.Errorf("commit after the budget failed: %v", err)
	}
}

// Invariant 8: warnings are reported on a chunk's first load only.
func TestWarningsOncePerChunk(t *testing.T) {
	var warns []Error
	r := openString(t, "1 |a 1\n2 |a\n", Config{Streams: []corpus.Stream{dense("a", 2)}, ChunkSequences: 1}, &warns)
	for i := 0; i < 3; i++ {
		loadAll(t, r)
	}
	if len(warns) != 2 || r.Summary().Warnings["dense-short"] != 2 {
		t.Errorf("warnings %v summary %+v", warns, r.Summary())
	}
}

// corpus.Source contract: concurrent LoadChunk calls give the same chunks
// as serial ones (run with -race).
func TestConcurrentLoadChunk(t *testing.T) {
	bad := map[int]bool{}
	for i := 0; i < 200; i += 7 {
		bad[i] = true
	}
	in := badCorpus(200, bad)
	cfg := Config{Streams: []corpus.Stream{dense("a", 1)}, ChunkBytes: 64, MaxErrors: len(bad)}
	serial := loadAll(t, openString(t, in, cfg, nil))
	r := openString(t, in, cfg, nil)
	var wg sync.WaitGroup
	got := make([][]*corpus.Chunk, 4)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := 0; c < r.Layout().NumChunks(); c++ {
				ch, err := r.LoadChunk((c + g*3) % r.Layout().NumChunks())
				if err != nil {
					t.Error(err)
					return
				}
				got[g] = append(got[g], ch)
			}
		}()
	}
	wg.Wait()
	for g := range got {
		for _, ch := range got[g] {
			want := serial[r.Layout().ChunkOf(ch.First)]
			if fmt.Sprint(ch.IDs, ch.Streams) != fmt.Sprint(want.IDs, want.Streams) {
				t.Fatalf("goroutine %d: chunk at %d differs", g, ch.First)
			}
		}
	}
	if s := r.Summary(); s.BadSequences != len(bad) {
		t.Errorf("bad sequences %d, want %d", s.BadSequences, len(bad))
	}
	if _, err := r.LoadChunk(r.Layout().NumChunks()); err == nil {
		t.Error("chunk out of range accepted")
	}
}

// Invariant 3: Summary.Samples is the same whether it was gathered while
// parsing (every chunk loaded), by reading the chunks (none loaded) or both
// (some loaded), bad rows included, and equals an independent count.
func TestSummarySamplesLazy(t *testing.T) {
	for _, tc := range []struct {
		file string
		cfg  Config
	}{
		{"ctf/atis/atis.test.ctf", Config{Streams: []corpus.Stream{sparse("S0", 943), sparse("S1", 26), sparse("S2", 129)}, ChunkBytes: 32 << 10}},
		{"ctf/atis/atis.test.ctf", Config{Streams: []corpus.Stream{sparse("S0", 943), sparse("S2", 129)}, DefinesMBSize: "S0", Label: "S2", ChunkBytes: 32 << 10}},
		{"ctf/reader_tests/Data/invalid_inputs.txt", Config{Streams: []corpus.Stream{dense("A", 1), sparse("B", 10)}, MaxErrors: 1000, ChunkSequences: 3}},
	} {
		path := shared.Need(t, tc.file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got [3][]int64
		for k := range got {
			r, err := Open(path, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			for c := 0; c < r.Layout().NumChunks(); c++ {
				if k == 2 || k == 1 && c%2 == 0 {
					if _, err := r.LoadChunk(c); err != nil {
						t.Fatal(err)
					}
				}
			}
			got[k] = r.Summary().Samples
			r.Close()
		}
		r, _ := Open(path, tc.cfg)
		want := carriedTotals(r.x, &r.cfg, data)
		r.Close()
		for k, g := range got {
			if !reflect.DeepEqual(g, want) {
				t.Errorf("%s %v: %d: per-stream lines %v, want %v", tc.file, tc.cfg.Streams, k, g, want)
			}
		}
	}
}

// SummaryNoTotals is Summary without Samples and reads nothing: the chunks
// not loaded stay uncounted until Summary counts them (a bad sequence's
// lines included).
func TestSummaryNoTotals(t *testing.T) {
	var warns []Error
	r := openString(t, "1 |a 1 |b 1\n2 |a x\n3 |a 1\n", Config{Streams: []corpus.Stream{dense("a", 1), dense("b", 1)}, MaxErrors: 5, ChunkSequences: 1}, &warns)
	if _, err := r.LoadChunk(1); err != nil {
		t.Fatal(err)
	}
	n := r.SummaryNoTotals()
	if n.Samples != nil || n.BadSequences != 1 || n.Sequences != 3 || n.Chunks != 3 {
		t.Errorf("SummaryNoTotals %+v", n)
	}
	for c, v := range r.carried {
		if (v != nil) != (c == 1) {
			t.Errorf("chunk %d counted %v: only the loaded chunk 1 should be", c, v)
		}
	}
	full := r.Summary()
	n.Samples = full.Samples
	if !reflect.DeepEqual(full, n) || !reflect.DeepEqual(full.Samples, []int64{3, 1}) {
		t.Errorf("Summary %+v, SummaryNoTotals %+v", full, n)
	}
}

// ParseChunkArranged gives the chunk ParseChunk gives, laid out in the
// order asked (corpus.Arrange), with the same accounting: sequences, ids,
// parse errors and every stream's data move together, one-hot streams keep
// the shared arrays, the chunk lent (the previous arrangement, of another
// size) shows nothing of its old contents, and commits charge and warn as
// ParseChunk's do.
func TestParseChunkArranged(t *testing.T) {
	var b strings.Builder
	bad := map[int]bool{}
	for i := range 90 {
		switch {
		case i%11 == 4:
			bad[i] = true
			fmt.Fprintf(&b, "%d |d x |h 1:1 |v 2:0.5\n", i)
		case i%7 == 0:
			fmt.Fprintf(&b, "%d |d %d |h %d:1 |v %d:0.5 3:2\n%d |d %d |h 2:1\n", i, i, i%5, i%9, i, i+1)
		default:
			fmt.Fprintf(&b, "%d |d %d |h %d:1 |v %d:1.5\n", i, i, i%5, i%9)
		}
	}
	streams := []corpus.Stream{dense("d", 1), {Name: "h", Dim: 5, Sparse: true}, {Name: "v", Dim: 9, Sparse: true}}
	cfg := Config{Streams: streams, ChunkSequences: 13, MaxErrors: 3}
	var plainWarns, arrWarns []Error
	plain := openString(t, b.String(), cfg, &plainWarns)
	acfg := cfg
	acfg.Warn = func(e Error) { arrWarns = append(arrWarns, e) }
	arr, err := Open(plain.Path(), acfg)
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Close()
	if _, _, err := arr.ParseChunkArranged(0, make([]int32, 12), nil); err == nil {
		t.Error("an order of 12 sequences for a chunk of 13 was accepted")
	}
	var into *corpus.Chunk
	for c := range plain.Layout().NumChunks() {
		want, wantCommit, werr := plain.ParseChunk(c)
		first, end := arr.Layout().Chunk(c)
		order := rotated(end-first, c*5)
		got, commit, err := arr.ParseChunkArranged(c, order, into)
		if werr != nil || err != nil {
			// The budget ran out at the same commit for both: every
			// parse fails from then on.
			if fmt.Sprint(err) != fmt.Sprint(werr) || !errors.Is(err, ErrTooManyErrors) {
				t.Fatalf("chunk %d: %v, ParseChunk's %v (want the budget error)", c, err, werr)
			}
			break
		}
		if got.First != want.First || got.Len() != want.Len() {
			t.Fatalf("chunk %d: first %d, %d sequences; want %d, %d", c, got.First, got.Len(), want.First, want.Len())
		}
		for k, i := range order {
			if got.IDs[k] != want.IDs[i] || got.BadAt(k) != nil != (want.BadAt(int(i)) != nil) {
				t.Fatalf("chunk %d: arranged sequence %d is %q (bad %v), want sequence %d, %q (bad %v)", c, k, got.IDs[k], got.BadAt(k), i, want.IDs[i], want.BadAt(int(i)))
			}
			if g, w := ChunkSamples(got, streams, k), ChunkSamples(want, streams, int(i)); !reflect.DeepEqual(g, w) {
				t.Fatalf("chunk %d: arranged sequence %d has %v, want sequence %d's %v", c, k, g, i, w)
			}
		}
		h := got.Streams[1]
		if !corpus.SharedIota(h.RowStart) || !corpus.SharedOnes(h.Values) {
			t.Errorf("chunk %d: the one-hot stream's arrays are not the shared ones", c)
		}
		ew, eg := wantCommit(), commit()
		if fmt.Sprint(eg) != fmt.Sprint(ew) {
			t.Fatalf("chunk %d: commit %v, ParseChunk's %v", c, eg, ew)
		}
		into = got
	}
	if fmt.Sprint(arrWarns) != fmt.Sprint(plainWarns) || len(plainWarns) == 0 {
		t.Errorf("warnings %v, ParseChunk's %v (want some)", arrWarns, plainWarns)
	}
	if g, w := arr.Summary(), plain.Summary(); g.BadSequences != w.BadSequences || w.BadSequences == 0 {
		t.Errorf("%d bad sequences charged, ParseChunk's %d (want some)", g.BadSequences, w.BadSequences)
	}
}
