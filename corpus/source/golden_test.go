package source

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/internal/golden"
)

// TestGoldenMinibatches pins the exact minibatches (positions, epochs,
// flags, each rank's sequences) of a fixed setup per randomizer, so that any
// change in packing, epochs or splitting shows up. Do not edit the golden
// files; regenerate them with go test -run TestGoldenMinibatches -update
// after a deliberate change.
func TestGoldenMinibatches(t *testing.T) {
	tc := makeCorpus(t, rand.New(rand.NewPCG(42, 42)), corpusOpts{n: 23, chunkSeq: 3, labels: true, bad: 1})
	sc, err := ParseSchedule("3*2:7")
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range kinds() {
		var b strings.Builder
		for rank := 0; rank < 2; rank++ {
			cfg := Config{Schedule: sc, EpochSize: 20, Workers: 2, Rank: rank}
			cfg.Randomize.Kind, cfg.Randomize.Seed, cfg.Randomize.WindowChunks = kind, 3, 2
			s := mustNew(t, tc, cfg)
			for i := 0; i < 25; i++ {
				mb, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				var sk []int
				for _, x := range mb.Skipped {
					sk = append(sk, x.Sequence)
				}
				fmt.Fprintf(&b, "rank %d step %d epoch %d sweep %d [%d,%d) eos=%v eoe=%v seqs=%v skipped=%v\n",
					rank, mb.Step, mb.Epoch, mb.Sweep, mb.Start, mb.End, mb.EndOfSweep, mb.EndOfEpoch, mb.Sequences, sk)
			}
		}
		golden.Check(t, "minibatches_"+kind+".golden", b.String())
	}
}
