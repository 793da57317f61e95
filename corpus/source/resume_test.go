package source

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// checkResume is the resume checker (invariant 7). It runs cfgA for n steps
// and saves the state after every step through the JSON encoding; runs cfgB
// (the same setup, possibly another Workers/Rank) uninterrupted; then, for
// every saved state, restores it into a fresh cfgB Source and demands
// exactly the minibatches the uninterrupted cfgB run gave from that step on.
func checkResume(t *testing.T, src corpus.Source, cfgA, cfgB Config, n int) {
	t.Helper()
	a := mustNew(t, src, cfgA)
	states := []State{a.State()}
	for i := 0; i < n; i++ {
		if _, err := a.Next(); err != nil {
			t.Fatal(err)
		}
		data, err := EncodeState(a.State())
		if err != nil {
			t.Fatal(err)
		}
		st, err := DecodeState(data)
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, st)
	}
	b := mustNew(t, src, cfgB)
	var want []Minibatch
	for i := 0; i <= n; i++ {
		if !reflect.DeepEqual(b.State(), states[i]) {
			t.Fatalf("step %d: state differs between W=%d and W=%d:\n%+v\n%+v", i, cfgA.workers(), cfgB.workers(), b.State(), states[i])
		}
		if i < n {
			want = append(want, readN(t, b, 1)...)
		}
	}
	for i, st := range states {
		r := mustNew(t, src, cfgB)
		if err := r.Restore(st); err != nil {
			t.Fatal(err)
		}
		got := readN(t, r, n-i)
		for j := range got {
			if !reflect.DeepEqual(got[j], want[i+j]) {
				t.Fatalf("resumed after step %d: minibatch %d differs:\n got %+v\nwant %+v", i, i+j, got[j], want[i+j])
			}
		}
	}
}

// TestResumeEqualsUninterrupted runs the resume checker over random corpora,
// all randomizers, schedules, epoch sizes (so resumes cross sweep and epoch
// ends) and worker counts that change across the resume.
func TestResumeEqualsUninterrupted(t *testing.T) {
	for seed := uint64(0); seed < 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		tc := makeCorpus(t, rng, corpusOpts{n: 1 + rng.IntN(25), oneSample: rng.IntN(3) == 0, chunkSeq: 1 + rng.IntN(4), labels: rng.IntN(2) == 0, bad: rng.IntN(2)})
		for _, kind := range kinds() {
			cfg := randomConfig(rng, kind)
			cfg.Schedule = randomSchedule(rng, 12)
			cfg.EpochSize = []EpochSize{EpochFull, EpochInf, EpochSize(1 + rng.IntN(30))}[rng.IntN(3)]
			cfg.CutAtSweep = rng.IntN(2) == 0
			cfgB := cfg
			cfg.Workers = 1 + rng.IntN(3)
			cfg.Rank = rng.IntN(cfg.Workers)
			cfgB.Workers = 1 + rng.IntN(4)
			cfgB.Rank = rng.IntN(cfgB.Workers)
			checkResume(t, tc, cfg, cfgB, 12+rng.IntN(12))
		}
	}
}

// TestRestoreInsideSequence checks invariant 7's rounding: a position inside
// a sequence resumes at the next sequence boundary, as Seek does.
func TestRestoreInsideSequence(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	tc := makeCorpus(t, rng, corpusOpts{n: 12, maxLen: 6, chunkSeq: 3})
	M := tc.Layout().TotalSamples()
	for _, kind := range kinds() {
		cfg := Config{EpochSize: EpochInf}
		cfg.Randomize.Kind = kind
		ref := mustNew(t, tc, cfg)
		var bounds []uint64
		for ref.Position() < 3*M {
			bounds = append(bounds, ref.Position())
			ref.NextK(1)
		}
		for p := uint64(0); p < 2*M; p++ {
			s := mustNew(t, tc, cfg)
			st := s.State()
			st.Position = p
			if err := s.Restore(st); err != nil {
				t.Fatal(err)
			}
			var want uint64
			for _, b := range bounds {
				if b >= p {
					want = b
					break
				}
			}
			if s.Position() != want {
				t.Fatalf("%s: restore at %d resumed at %d, want boundary %d", kind, p, s.Position(), want)
			}
			if err := s.Seek(p); err != nil || s.Position() != want || s.State().Step != 0 {
				t.Fatalf("%s: Seek(%d) at %d step %d (%v)", kind, p, s.Position(), s.State().Step, err)
			}
		}
	}
}

// TestSeekFarSweep checks that a seek to sweep 10^9 lands where the
// randomizer says and yields a full-size minibatch there.
func TestSeekFarSweep(t *testing.T) {
	tc := oneSampleCorpus(t, 100, 10)
	for _, kind := range kinds() {
		cfg := Config{EpochSize: EpochInf}
		cfg.Randomize.Kind = kind
		s := mustNew(t, tc, cfg)
		p := uint64(1e9)*100 + 37
		if err := s.Seek(p); err != nil {
			t.Fatal(err)
		}
		mb, err := s.NextK(10)
		if err != nil || mb.Start != p || mb.Sweep != 1e9 || len(mb.Sequences) != 10 || mb.Step != 0 {
			t.Fatalf("%s: %+v %v", kind, mb, err)
		}
		order := timelineOrderFrom(t, tc, cfg, 1e9)
		if !reflect.DeepEqual(mb.Sequences, order[37:47]) {
			t.Errorf("%s: sequences %v, want %v", kind, mb.Sequences, order[37:47])
		}
	}
}

func timelineOrderFrom(t *testing.T, tc *testCorpus, cfg Config, sweep uint64) []int {
	s := mustNew(t, tc, cfg)
	if err := s.Seek(sweep * tc.Layout().TotalSamples()); err != nil {
		t.Fatal(err)
	}
	mb, err := s.NextK(int(tc.Layout().TotalSamples()))
	if err != nil {
		t.Fatal(err)
	}
	return append([]int(nil), mb.Sequences...)
}
