package source

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/randomize"
)

// A CTF corpus's warnings and error budget are reported in read order: the
// minibatches delivered before the budget runs out, the error that stops the
// read, and every warning with its order are the same whether chunks are
// parsed ahead on several goroutines or one at a time as the reader needs
// them. Before loads were committed on first use, a chunk parsed ahead spent
// the budget early, so a prefetching read stopped sooner, at a bad sequence
// that depended on which load finished first.
func TestBudgetFollowsReadOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for trial := range 24 {
		path, nbad := writeBadCTF(t, rng, 400+rng.IntN(400))
		maxErr := rng.IntN(nbad + 1)
		kind := []string{"none", "window", "cntk"}[trial%3]
		cfg := Config{Randomize: randomize.Config{Kind: kind, WindowChunks: 1 + rng.IntN(6), Seed: rng.Uint64()},
			Schedule: ConstantSchedule(1 + rng.IntN(30)), EpochSize: EpochInf}
		var want budgetRun
		for k, prefetch := range []int{-1, 0, 2, 16, 16} {
			c := cfg
			c.Prefetch, c.PrefetchChunks = prefetch >= 0, max(prefetch, 0)
			got := readUntilBudget(t, path, maxErr, c)
			if k == 0 {
				want = got
				if !errors.Is(got.err, ctf.ErrTooManyErrors) && maxErr < nbad {
					t.Fatalf("trial %d: %d bad sequences, max %d: the read ended with %v, want the budget error", trial, nbad, maxErr, got.err)
				}
				continue
			}
			if fmt.Sprint(got.err) != fmt.Sprint(want.err) {
				t.Fatalf("trial %d (%s, prefetch %d): error\n%v\nwant (no prefetch)\n%v", trial, kind, prefetch, got.err, want.err)
			}
			if !reflect.DeepEqual(got.warns, want.warns) {
				t.Fatalf("trial %d (%s, prefetch %d): warnings\n%q\nwant (no prefetch)\n%q", trial, kind, prefetch, got.warns, want.warns)
			}
			if !reflect.DeepEqual(got.mbs, want.mbs) {
				t.Fatalf("trial %d (%s, prefetch %d): %d minibatches before the error, want %d (or they differ)", trial, kind, prefetch, len(got.mbs), len(want.mbs))
			}
		}
	}
}

type budgetRun struct {
	mbs   [][]string // each minibatch's ids, then "!" and each skipped ordinal
	warns []string
	err   error
}

// readUntilBudget reads path with the error budget maxErr until an error,
// or for two sweeps' worth of minibatches.
func readUntilBudget(t *testing.T, path string, maxErr int, cfg Config) budgetRun {
	t.Helper()
	var run budgetRun
	var mu sync.Mutex
	r, err := ctf.Open(path, ctf.Config{Streams: budgetStreams, ChunkBytes: 512, MaxErrors: maxErr,
		Warn: func(e ctf.Error) {
			mu.Lock()
			run.warns = append(run.warns, e.Error())
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := mustNew(t, r, cfg)
	for range 2 * r.Layout().NumSequences() {
		mb, err := s.Next()
		if err != nil {
			run.err = err
			break
		}
		ids := append([]string(nil), mb.IDs...)
		ids = append(ids, "!")
		for _, sk := range mb.Skipped {
			ids = append(ids, fmt.Sprint(sk.Sequence))
		}
		run.mbs = append(run.mbs, ids)
	}
	s.Close()
	mu.Lock()
	defer mu.Unlock()
	return run
}

var budgetStreams = []corpus.Stream{{Name: "x", Dim: 3}, {Name: "y", Dim: 10, Sparse: true}}

// writeBadCTF writes n sequences of one or two rows, about one in twelve
// malformed and one in twenty with an unknown stream (a warning), and
// returns the path and the number of bad sequences.
func writeBadCTF(t *testing.T, rng *rand.Rand, n int) (string, int) {
	t.Helper()
	var b strings.Builder
	bad := 0
	for i := range n {
		rows := 1 + rng.IntN(2)
		broken := rng.IntN(12) == 0
		for j := range rows {
			fmt.Fprintf(&b, "%d |x %d 1 2 |y %d:1", i, j, rng.IntN(10))
			if rng.IntN(20) == 0 {
				fmt.Fprintf(&b, " |u%d 1", rng.IntN(3))
			}
			if broken && j == rows-1 {
				b.WriteString([]string{" |y 12:1", " |x 1 z", " |y 3;1"}[rng.IntN(3)])
			}
			b.WriteByte('\n')
		}
		if broken {
			bad++
		}
	}
	path := filepath.Join(t.TempDir(), "bad.ctf")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, bad
}
