package ctf

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// transcript is what one reading of a file reports: each load's error (or
// none), every warning in order, and the summary's counts.
type transcript struct {
	errs  []string
	warns []string
	sum   Summary
}

// sessionCorpus has bad sequences every 7th, one sequence without the
// defines_mb_size stream (dropped by the index) and no final newline.
func sessionCorpus() string {
	var b strings.Builder
	for i := range 60 {
		switch {
		case i == 11:
			fmt.Fprintf(&b, "%d |b 1\n", i)
		case i%7 == 3:
			fmt.Fprintf(&b, "%d |a x%d |b 1\n", i, i)
		default:
			fmt.Fprintf(&b, "%d |a %d |b 1\n", i, i)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

var sessionConfig = Config{Streams: []corpus.Stream{dense("a", 1), dense("b", 1)}, DefinesMBSize: "a", ChunkSequences: 6, MaxErrors: 5}

// readThrough loads every chunk with load, in order, twice, recording the
// errors, then takes the summary.
func readThrough(n int, load func(c int) error, warns *[]string, sum func() Summary) transcript {
	var tr transcript
	for range 2 {
		for c := range n {
			if err := load(c); err != nil {
				tr.errs = append(tr.errs, fmt.Sprintf("chunk %d: %v", c, err))
			} else {
				tr.errs = append(tr.errs, "")
			}
		}
	}
	tr.warns = append([]string(nil), *warns...)
	tr.sum = sum()
	return tr
}

// A Session reports and spends as a Reader opened anew on the same file
// would, whatever other sessions on the Reader (or the Reader itself) have
// spent: the index's warnings and dropped sequence again, each chunk's
// warnings on its first load, its own budget, running out at the same
// load with the same error, and its own summary counts. Sessions reading
// at once (run with -race) do not disturb each other either.
func TestSessionsHaveTheirOwnBudget(t *testing.T) {
	path := writeTemp(t, sessionCorpus())
	// open opens path anew with sessionConfig, recording its warnings.
	open := func() (*Reader, *[]string) {
		warns := new([]string)
		cfg := sessionConfig
		cfg.Warn = func(e Error) { *warns = append(*warns, e.Error()) }
		r, err := Open(path, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r, warns
	}
	readerThrough := func(r *Reader, warns *[]string) transcript {
		return readThrough(r.Layout().NumChunks(), func(c int) error { _, err := r.LoadChunk(c); return err }, warns, r.Summary)
	}
	want := readerThrough(open())
	if !strings.Contains(strings.Join(want.errs, "\n"), "max_errors") || want.sum.BadSequences <= sessionConfig.MaxErrors {
		t.Fatalf("the corpus does not exhaust the budget: %q, %+v", want.errs, want.sum)
	}
	if w := strings.Join(want.warns, "\n"); !strings.Contains(w, "without a newline") || !strings.Contains(w, `stream "a"`) {
		t.Fatalf("the opening's warnings are missing from a fresh reading: %q", want.warns)
	}

	r, readerWarns := open()
	session := func() transcript {
		var mu sync.Mutex
		var warns []string
		s, err := r.NewSession(sessionConfig.MaxErrors, func(e Error) {
			mu.Lock()
			warns = append(warns, e.Error())
			mu.Unlock()
		})
		if err != nil {
			t.Error(err)
			return transcript{}
		}
		return readThrough(r.Layout().NumChunks(), func(c int) error { _, err := s.LoadChunk(c); return err }, &warns, s.Summary)
	}
	// The Reader spends its own budget first; then two sessions one after
	// the other; then three at once.
	if got := readerThrough(r, readerWarns); !reflect.DeepEqual(got, want) {
		t.Fatalf("the Reader's own reading:\n%+v\nwant\n%+v", got, want)
	}
	for k := range 2 {
		if got := session(); !reflect.DeepEqual(got, want) {
			t.Fatalf("session %d:\n%+v\nwant (a Reader opened anew)\n%+v", k, got, want)
		}
	}
	got := make([]transcript, 3)
	var wg sync.WaitGroup
	for k := range got {
		wg.Go(func() { got[k] = session() })
	}
	wg.Wait()
	for k := range got {
		if !reflect.DeepEqual(got[k], want) {
			t.Fatalf("concurrent session %d:\n%+v\nwant\n%+v", k, got[k], want)
		}
	}
}

// A session's deferred and arranged parses charge its own budget, like
// LoadChunk; and a budget spent by the index's dropped sequences fails
// NewSession as it fails Open.
func TestSessionParsesAndOpening(t *testing.T) {
	path := writeTemp(t, sessionCorpus())
	r, err := Open(path, sessionConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, err := r.NewSession(sessionConfig.MaxErrors, nil)
	if err != nil {
		t.Fatal(err)
	}
	var spent error
	for c := 0; c < r.Layout().NumChunks() && spent == nil; c++ {
		var commit func() error
		if c%2 == 0 {
			_, commit, spent = s.ParseChunk(c)
		} else {
			first, end := r.Layout().Chunk(c)
			_, commit, spent = s.ParseChunkArranged(c, rotated(end-first, c), nil)
		}
		if spent == nil {
			spent = commit()
		}
	}
	if !errors.Is(spent, ErrTooManyErrors) {
		t.Fatalf("the session's parses ended with %v, want the budget error", spent)
	}
	if got := r.SummaryNoTotals().BadSequences; got != 1 {
		t.Errorf("the Reader's own count is %d after a session's reading, want 1 (the dropped sequence)", got)
	}
	if _, err := r.LoadChunk(0); err != nil {
		t.Errorf("the Reader's budget was spent by a session: %v", err)
	}
	strict := sessionConfig
	strict.MaxErrors = 0
	if _, err := Open(path, strict); !errors.Is(err, ErrTooManyErrors) {
		t.Fatalf("Open with max_errors 0 and a dropped sequence: %v", err)
	}
	if _, err := r.NewSession(0, nil); !errors.Is(err, ErrTooManyErrors) {
		t.Errorf("NewSession with max_errors 0 and a dropped sequence: %v", err)
	}
	if _, err := r.NewSession(-1, nil); err == nil {
		t.Error("NewSession accepted max_errors -1")
	}
	// A session's budget need not be the Reader's: with 10 it reads the
	// whole file (9 bad sequences and the dropped one), which the Reader's
	// 5 does not.
	wide, err := r.NewSession(10, nil)
	if err != nil {
		t.Fatal(err)
	}
	for c := range r.Layout().NumChunks() {
		if _, err := wide.LoadChunk(c); err != nil {
			t.Fatalf("chunk %d with a budget of 10: %v", c, err)
		}
	}
	if got := wide.SummaryNoTotals().BadSequences; got != 10 {
		t.Errorf("%d bad sequences counted, want 10", got)
	}
}
