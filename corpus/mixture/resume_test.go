package mixture

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus/source"
)

// TestResume checks invariant 7: a state taken at a random step, through
// its JSON encoding, restored into a new mixture with any workers and rank,
// gives the same remaining minibatches; epochs count labels (invariant 4).
func TestResume(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 25; trial++ {
		_, cs := randomMixture(t, rng, true)
		cfg := randomConfig(rng)
		cfg.EpochSize = source.EpochSize(1 + rng.IntN(40))
		cfg.Schedule, _ = source.ParseSchedule("3*2:11")
		cfg.CutAtSweep = rng.IntN(2) == 0
		var states []State
		cfg.OnEpochEnd = func(e int, st State) { states = append(states, st) }
		m := mustNew(t, cs, cfg)
		var full []mbCopy
		var mid []State
		for i := 0; i < 50; i++ {
			mid = append(mid, m.State())
			mb, err := m.Next()
			if err != nil {
				t.Fatal(err)
			}
			full = append(full, copyMB(mb))
			if mb.Epoch != full[i].epoch || (i > 0 && full[i-1].end != mb.Start) {
				t.Fatalf("trial %d step %d: not contiguous", trial, i)
			}
		}
		at := rng.IntN(len(mid))
		data, err := source.EncodeState(mid[at])
		if err != nil {
			t.Fatal(err)
		}
		st, err := source.DecodeState(data)
		if err != nil {
			t.Fatal(err)
		}
		cfg.OnEpochEnd = nil
		cfg.Workers = 1 + rng.IntN(3)
		var rest [][]mbCopy
		for r := 0; r < cfg.Workers; r++ {
			cfg.Rank = r
			m2 := mustNew(t, cs, cfg)
			if err := m2.Restore(st); err != nil {
				t.Fatal(err)
			}
			var got []mbCopy
			for i := at; i < len(full); i++ {
				mb, err := m2.Next()
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, copyMB(mb))
			}
			rest = append(rest, got)
		}
		for i := at; i < len(full); i++ {
			u := unionRanks(rest, i-at)
			if !equalMB(u, full[i]) {
				t.Fatalf("trial %d: resumed at step %d with %d workers: step %d differs:\n got %+v\nwant %+v", trial, at, cfg.Workers, i, u, full[i])
			}
		}
		for _, st := range states {
			if st.Epoch == 0 {
				t.Fatalf("trial %d: an epoch-end state in epoch 0", trial)
			}
		}
	}
}

// unionRanks joins the ranks' parts of step i in rank order.
func unionRanks(ranks [][]mbCopy, i int) mbCopy {
	u := ranks[0][i]
	u.seqs, u.skipped, u.ids = nil, nil, nil
	u.dense = make([][]float32, len(ranks[0][i].dense))
	for _, r := range ranks {
		p := r[i]
		u.seqs = append(u.seqs, p.seqs...)
		u.skipped = append(u.skipped, p.skipped...)
		u.ids = append(u.ids, p.ids...)
		for s := range p.dense {
			u.dense[s] = append(u.dense[s], p.dense[s]...)
		}
	}
	return u
}

// TestWorkersUnion checks invariant 6: for W = 1..4, the ranks' parts of
// every step, joined in rank order, are the single-worker minibatch, with
// the same positions and flags on every rank.
func TestWorkersUnion(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := 0; trial < 15; trial++ {
		tcs, cs := randomMixture(t, rng, true)
		cfg := randomConfig(rng)
		cfg.EpochSize = source.EpochSize(1 + rng.IntN(30))
		cfg.Schedule = source.ConstantSchedule(1 + rng.IntN(25))
		single := mustNew(t, cs, cfg)
		var want []mbCopy
		for i := 0; i < 30; i++ {
			mb, err := single.Next()
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, copyMB(mb))
		}
		for W := 1; W <= 4; W++ {
			var ranks [][]mbCopy
			for r := 0; r < W; r++ {
				c := cfg
				c.Workers, c.Rank = W, r
				m := mustNew(t, cs, c)
				var got []mbCopy
				for range want {
					mb, err := m.Next()
					if err != nil {
						t.Fatal(err)
					}
					checkData(t, tcs, mb)
					got = append(got, copyMB(mb))
				}
				ranks = append(ranks, got)
			}
			for i := range want {
				if u := unionRanks(ranks, i); !equalMB(u, want[i]) {
					t.Fatalf("trial %d W=%d step %d: union %+v, single %+v", trial, W, i, u, want[i])
				}
			}
		}
	}
}

// TestOrderIndependence checks invariant 3: the concatenated sequences are
// the same whatever the minibatch sizes, and every minibatch packs whole
// sequences up to K (the first always).
func TestOrderIndependence(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 20; trial++ {
		_, cs := randomMixture(t, rng, false)
		cfg := randomConfig(rng)
		cfg.EpochSize = source.EpochInf
		var streams [][]seqRef
		for run := 0; run < 3; run++ {
			m := mustNew(t, cs, cfg)
			var got []seqRef
			for m.Position() < 300 {
				k := 1 + rng.IntN(40)
				mb, err := m.NextK(k)
				if err != nil {
					t.Fatal(err)
				}
				if n := mb.End - mb.Start; n > uint64(k) && len(mb.Sequences)+len(mb.Skipped) > 1 {
					t.Fatalf("trial %d: %d samples in a minibatch of at most %d", trial, n, k)
				}
				got = append(got, copyMB(mb).seqs...)
			}
			streams = append(streams, got)
		}
		for run := 1; run < len(streams); run++ {
			n := min(len(streams[0]), len(streams[run]))
			for i := 0; i < n; i++ {
				if streams[0][i] != streams[run][i] {
					t.Fatalf("trial %d: sequence %d differs between minibatch sizes: %v and %v", trial, i, streams[0][i], streams[run][i])
				}
			}
		}
	}
}

// TestFingerprintRefused checks invariant 8: a state of another weight,
// seed or corpus, or of a single corpus, is refused naming the fields.
func TestFingerprintRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	a := makeCorpus(t, rng, 0, corpusOpts{n: 10, maxLen: 3})
	b := makeCorpus(t, rng, 1, corpusOpts{n: 7, maxLen: 3})
	c := makeCorpus(t, rng, 2, corpusOpts{n: 7, maxLen: 3})
	cs := []Corpus{{a, Weight{7, 10, false}, "a"}, {b, Weight{3, 10, false}, "b"}}
	m := mustNew(t, cs, source.Config{})
	if _, err := m.NextK(5); err != nil {
		t.Fatal(err)
	}
	st := m.State()
	cases := []struct {
		cs     []Corpus
		cfg    source.Config
		fields []string
	}{
		{[]Corpus{{a, Weight{6, 10, false}, "a"}, {b, Weight{4, 10, false}, "b"}}, source.Config{}, []string{"mix0.weight", "mix1.weight"}},
		{cs, source.Config{Randomize: source.Config{}.Randomize}, nil},
		{[]Corpus{{a, Weight{7, 10, false}, "a"}, {c, Weight{3, 10, false}, "c"}}, source.Config{}, []string{"mix1.corpus.content"}},
		{[]Corpus{{a, Weight{70, 1, true}, "a"}, {b, Weight{30, 1, true}, "b"}}, source.Config{}, nil},
	}
	cases[1].cfg.Randomize.Seed = 5
	cases[1].fields = []string{"seed", "mix0.seed", "mix1.seed"}
	for i, tc := range cases {
		m2 := mustNew(t, tc.cs, tc.cfg)
		err := m2.Restore(st)
		var fe *FingerprintError
		if len(tc.fields) == 0 {
			if err != nil {
				t.Fatalf("case %d: %v (sample counts in the same ratio give the same order)", i, err)
			}
			continue
		}
		if !errors.As(err, &fe) {
			t.Fatalf("case %d: %v, want a FingerprintError", i, err)
		}
		for _, f := range tc.fields {
			if !strings.Contains(err.Error(), " "+f+": ") {
				t.Fatalf("case %d: %v does not name %s", i, err, f)
			}
		}
		if m2.Position() != 0 {
			t.Fatalf("case %d: a refused state moved the mixture", i)
		}
	}
	// A single corpus's state.
	s, err := source.New(a, source.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := m.Restore(s.State()); err == nil || !strings.Contains(err.Error(), "kind: state \"(absent)\", now \"mixture\"") {
		t.Fatalf("a single corpus's state: %v", err)
	}
}
