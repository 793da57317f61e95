package source

import (
	"math"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/randomize"
)

// seekCorpus has n sequences of one sample of stream "a" and labels label
// samples of stream "b" each.
func seekCorpus(t *testing.T, n, labels int) *corpus.Memory {
	t.Helper()
	streams := []corpus.Stream{{Name: "a", Dim: 1}, {Name: "b", Dim: 1}}
	seqs := make([]corpus.MemorySequence, n)
	for i := range seqs {
		seqs[i].ID = string(rune('a' + i))
		seqs[i].Streams = []corpus.MemoryStream{{Dense: [][]float32{{1}}}, {}}
		for range labels {
			seqs[i].Streams[1].Dense = append(seqs[i].Streams[1].Dense, []float32{2})
		}
	}
	m, err := corpus.NewMemory(streams, seqs, corpus.MemoryConfig{DefinesMBSize: "a", Label: "b"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Invariant 7: Seek refuses positions whose sweep number or label count
// does not fit in 64 bits, with an error naming the position, and leaves
// the Source where it was; the largest position it accepts still reads.
func TestSeekOverflow(t *testing.T) {
	for _, kind := range kinds() {
		// M = 3 samples per sweep: sweep numbers must stay below
		// (2^64-1)/3 - 1.
		m := seekCorpus(t, 3, 0)
		s := mustNew(t, m, Config{Randomize: randomize.Config{Kind: kind}, EpochSize: EpochInf})
		if _, err := s.NextK(2); err != nil {
			t.Fatal(err)
		}
		before := s.State()
		for _, pos := range []uint64{math.MaxUint64, math.MaxUint64 - 3, (math.MaxUint64/3 - 1) * 3} {
			err := s.Seek(pos)
			if err == nil || !strings.Contains(err.Error(), "too far") || !strings.Contains(err.Error(), "position") {
				t.Fatalf("%s: Seek(%d) = %v, want a too-far error", kind, pos, err)
			}
			if st := s.State(); st.Position != before.Position || st.Step != before.Step {
				t.Fatalf("%s: a refused Seek moved the source: %+v, was %+v", kind, st, before)
			}
		}
		ok := uint64(math.MaxUint64/3-2) * 3 // the last sweep start it accepts
		if err := s.Seek(ok); err != nil {
			t.Fatalf("%s: Seek(%d): %v", kind, ok, err)
		}
		if mb, err := s.NextK(3); err != nil || mb.Start != ok || mb.End != ok+3 {
			t.Fatalf("%s: after Seek(%d): %+v %v", kind, ok, mb, err)
		}

		lm := seekCorpus(t, 2, 1<<10) // 2 samples, 2^11 label samples per sweep
		s = mustNew(t, lm, Config{Randomize: randomize.Config{Kind: kind}, EpochSize: 1 << 30})
		before = s.State()
		far := uint64(1) << 54 * 2 // sweep 2^54: 2^54 * 2^11 label samples overflow
		err := s.Seek(far)
		if err == nil || !strings.Contains(err.Error(), "label count overflows") {
			t.Fatalf("%s: Seek(%d) = %v, want a label overflow error", kind, far, err)
		}
		if st := s.State(); st.Position != before.Position || st.Step != before.Step {
			t.Fatalf("%s: a refused Seek moved the source", kind)
		}
		near := uint64(1) << 52 * 2 // 2^52 * 2^11 = 2^63 fits
		if err := s.Seek(near); err != nil {
			t.Fatalf("%s: Seek(%d): %v", kind, near, err)
		}
	}
}
