package ctf

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// loadLoop is the reference for LoadAll: LoadChunk(0), LoadChunk(1), ...
// until the first error, with fn's chunk indices recorded.
func loadLoop(r *Reader) ([]*corpus.Chunk, error) {
	var out []*corpus.Chunk
	for c := 0; c < r.Layout().NumChunks(); c++ {
		ch, err := r.LoadChunk(c)
		if err != nil {
			return out, err
		}
		out = append(out, ch)
	}
	return out, nil
}

// Invariant 11 (with 7 and 8): parsing chunks in parallel gives the
// chunks, the warnings in their order, the budget error and the summary of
// a serial LoadChunk loop, for any worker count (run with -race).
func TestLoadAllMatchesLoadChunkLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for trial := range 40 {
		n := 1 + rng.IntN(60)
		var b strings.Builder
		for i := range n {
			switch rng.IntN(6) {
			case 0:
				fmt.Fprintf(&b, "%d |a x%d\n", i, i) // bad number
			case 1:
				fmt.Fprintf(&b, "%d |a\n", i) // short dense sample: a warning
			default:
				fmt.Fprintf(&b, "%d |a %d 1\n", i, i)
			}
		}
		cfg := Config{Streams: []corpus.Stream{dense("a", 2)}, ChunkSequences: 1 + rng.IntN(5), MaxErrors: rng.IntN(8)}
		path := writeTemp(t, b.String())
		open := func(warns *[]Error) *Reader {
			c := cfg
			c.Warn = func(e Error) { *warns = append(*warns, e) }
			r, err := Open(path, c)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			return r
		}
		var wantWarns []Error
		ref := open(&wantWarns)
		want, wantErr := loadLoop(ref)
		wantSum := ref.SummaryNoTotals()
		for _, workers := range []int{1, 2, 3, 8} {
			var warns []Error
			r := open(&warns)
			var got []*corpus.Chunk
			err := r.LoadAll(workers, func(c int, ch *corpus.Chunk) error {
				if c != len(got) {
					t.Fatalf("trial %d: fn called with chunk %d, want %d", trial, c, len(got))
				}
				got = append(got, ch)
				return nil
			})
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("trial %d workers %d: error %v, want %v", trial, workers, err, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d workers %d: chunks differ from the LoadChunk loop", trial, workers)
			}
			if !reflect.DeepEqual(warns, wantWarns) {
				t.Fatalf("trial %d workers %d: warnings\n%v\nwant\n%v", trial, workers, warns, wantWarns)
			}
			if sum := r.SummaryNoTotals(); !reflect.DeepEqual(sum, wantSum) {
				t.Fatalf("trial %d workers %d: summary %+v, want %+v", trial, workers, sum, wantSum)
			}
		}
	}
}

// LoadAll stops at fn's first error and returns it.
func TestLoadAllStopsOnCallbackError(t *testing.T) {
	r := openString(t, badCorpus(30, nil), Config{Streams: []corpus.Stream{dense("a", 1)}, ChunkSequences: 2}, nil)
	stop := errors.New("stop")
	calls := 0
	err := r.LoadAll(4, func(c int, _ *corpus.Chunk) error {
		calls++
		if c == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 4 {
		t.Errorf("err %v after %d calls; want stop after 4", err, calls)
	}
}
