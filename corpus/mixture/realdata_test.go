package mixture

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/corpus/parquet"
	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/internal/shared"
)

// TestCTFAndParquet mixes ATIS train (CTF) with ATIS test converted to
// Parquet: each corpus's sequences come in its own timeline's order
// (invariant 2), the shares keep invariant 1, and a Parquet corpus
// declaring other streams is refused naming both corpora.
func TestCTFAndParquet(t *testing.T) {
	train := shared.Need(t, "ctf", "atis", "atis.train.ctf")
	test := shared.Need(t, "ctf", "atis", "atis.test.ctf")
	streams := []corpus.Stream{{Name: "S0", Dim: 943, Sparse: true}, {Name: "S1", Dim: 26, Sparse: true}, {Name: "S2", Dim: 129, Sparse: true}}
	cfg := ctf.Config{Streams: streams, ChunkBytes: 64 << 10}
	pq := filepath.Join(t.TempDir(), "test.parquet")
	tr, err := ctf.Open(test, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := file.ToParquet(tr, pq, parquet.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	tr.Close()
	a, err := file.Open(train, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := file.Open(pq, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cs := []Corpus{{a, Weight{Num: 1, Den: 2}, train}, {b, Weight{Num: 1, Den: 2}, pq}}
	sc := source.Config{Prefetch: true, PrefetchChunks: 2, Schedule: source.ConstantSchedule(512)}
	sc.Randomize.WindowChunks = 4
	m := mustNew(t, cs, sc)
	var T uint64
	got := [2][]int{}
	for m.Epoch() < 1 {
		mb, err := m.Next()
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range mb.Sequences {
			got[mb.Corpus[i]] = append(got[mb.Corpus[i]], o)
		}
		T = mb.End
		c := m.CorpusPositions()
		if d := int64(2*c[0]) - int64(T); d < -70*2 || d > 70*2 { // ATIS sequences are at most ~50 samples
			t.Fatalf("at %d: corpus samples %v", T, c)
		}
	}
	// The anchor is train (the longer sweep at equal weights): one epoch is
	// one sweep of it, and the small corpus repeats within it.
	if m.Anchor() != 0 || len(got[0]) != a.Layout().NumSequences() || len(got[1]) <= b.Layout().NumSequences() {
		t.Fatalf("anchor %d; %d and %d sequences", m.Anchor(), len(got[0]), len(got[1]))
	}
	for k, r := range []file.Reader{a, b} {
		s, err := source.New(r, source.Config{Randomize: m.lanes[k].src.Config().Randomize, EpochSize: source.EpochInf})
		if err != nil {
			t.Fatal(err)
		}
		var want []int
		for len(want) < len(got[k]) {
			mb, err := s.NextK(4096)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, mb.Sequences...)
		}
		s.Close()
		for i := range got[k] {
			if got[k][i] != want[i] {
				t.Fatalf("corpus %d: sequence %d is %d, its own timeline has %d", k, i, got[k][i], want[i])
			}
		}
	}
	other, err := file.Open(pq, ctf.Config{Streams: streams[:2]})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := New([]Corpus{cs[0], {other, Weight{Num: 1, Den: 1}, "two-streams.parquet"}}, source.Config{}); err == nil ||
		!contains(err.Error(), train, "two-streams.parquet", `"S2"`) {
		t.Fatalf("a corpus without S2: %v", err)
	}
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
