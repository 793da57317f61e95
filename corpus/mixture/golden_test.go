package mixture

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/internal/golden"
)

// TestGoldenMixture pins the first minibatches (positions, flags, each
// sequence's corpus and ordinal, per-corpus samples) of a fixed mixture of
// three corpora, and checks that a second run gives the same. Do not edit
// the golden file; regenerate it with go test -run TestGoldenMixture
// -update after a deliberate change.
func TestGoldenMixture(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 42))
	var cs []Corpus
	for k, n := range []int{23, 5, 11} {
		tc := makeCorpus(t, rng, k, corpusOpts{n: n, maxLen: 4, chunkSeq: 3, labels: true, bad: k % 2})
		cs = append(cs, Corpus{tc, []Weight{{5, 10, false}, {2, 10, false}, {3, 10, false}}[k], fmt.Sprint("c", k)})
	}
	sc, err := source.ParseSchedule("3*2:7")
	if err != nil {
		t.Fatal(err)
	}
	var runs [2]string
	for i := range runs {
		var b strings.Builder
		cfg := source.Config{Schedule: sc, EpochSize: 20}
		cfg.Randomize.Seed, cfg.Randomize.WindowChunks = 3, 2
		m := mustNew(t, cs, cfg)
		for step := 0; step < 25; step++ {
			mb, err := m.Next()
			if err != nil {
				t.Fatal(err)
			}
			c := copyMB(mb)
			fmt.Fprintf(&b, "step %d epoch %d sweep %d [%d,%d) eos=%v eoe=%v seqs=%v skipped=%v samples=%v\n",
				c.step, c.epoch, c.sweep, c.start, c.end, c.eos, c.eoe, c.seqs, c.skipped, c.samples)
		}
		runs[i] = b.String()
	}
	if runs[0] != runs[1] {
		t.Fatal("two runs of the same mixture differ")
	}
	golden.Check(t, "mixture.golden", runs[0])
}
