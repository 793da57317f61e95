package source

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// randomSchedule draws a schedule of 1..3 steps with sizes up to maxK.
func randomSchedule(rng *rand.Rand, maxK int) Schedule {
	var sc Schedule
	for i := rng.IntN(3); i >= 0; i-- {
		sc.steps = append(sc.steps, scheduleStep{1 + rng.IntN(maxK), 1 + rng.IntN(2)})
	}
	return sc
}

// TestTimelineProperties checks invariants 1, 3, 4, 5 and 10 against the
// SPEC stated directly over the materialized timeline, for many random
// corpora, randomizers, schedules, epoch sizes and sweep-cut settings.
func TestTimelineProperties(t *testing.T) {
	for seed := uint64(0); seed < 120; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		o := corpusOpts{n: 1 + rng.IntN(40), oneSample: rng.IntN(3) == 0, chunkSeq: 1 + rng.IntN(6), labels: rng.IntN(2) == 0, bad: rng.IntN(2)}
		tc := makeCorpus(t, rng, o)
		l := tc.Layout()
		M := l.TotalSamples()
		for _, kind := range kinds() {
			cfg := randomConfig(rng, kind)
			cfg.Schedule = randomSchedule(rng, 3+int(M/2))
			switch rng.IntN(3) {
			case 0:
				cfg.EpochSize = EpochFull
			case 1:
				cfg.EpochSize = EpochInf
			default:
				cfg.EpochSize = EpochSize(1 + rng.Uint64N(2*l.TotalLabels()+2))
			}
			cfg.CutAtSweep = rng.IntN(2) == 0
			s := mustNew(t, tc, cfg)
			checkTimeline(t, tc, s, cfg, 4)
		}
	}
}

func checkTimeline(t *testing.T, tc *testCorpus, s *Source, cfg Config, sweeps int) {
	t.Helper()
	l := tc.Layout()
	M := l.TotalSamples()
	// The last minibatch starts before sweeps*M and may run on for up to
	// the largest minibatch size: enough sweeps for that (a corpus can be
	// smaller than K).
	maxK := 0
	for _, st := range cfg.Schedule.steps {
		maxK = max(maxK, st.size)
	}
	order := timelineOrder(t, l, s.Config().Randomize, sweeps+2+maxK/int(M))
	var flat []int
	var sweepOf []uint64
	for sw, o := range order {
		flat = append(flat, o...)
		for range o {
			sweepOf = append(sweepOf, uint64(sw))
		}
	}
	idx, pos, C := 0, uint64(0), uint64(0)
	for step := uint64(0); pos < uint64(sweeps)*M; step++ {
		mb, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		checkData(t, tc, mb)
		var e int
		switch cfg.EpochSize {
		case EpochFull:
			e = int(pos / M)
		case EpochInf:
		default:
			e = int(C / uint64(cfg.EpochSize))
		}
		K := cfg.Schedule.At(e)
		if mb.Step != step || mb.Start != pos || mb.Epoch != e || mb.Sweep != sweepOf[idx] {
			t.Fatalf("%s step %d: got step %d start %d epoch %d sweep %d; want %d %d %d %d", cfg.Randomize.Kind, step,
				mb.Step, mb.Start, mb.Epoch, mb.Sweep, step, pos, e, sweepOf[idx])
		}
		// Walk the expected sequences: delivered and skipped ones interleave in timeline order.
		nDel, nSkip := 0, 0
		var total uint64
		eoe := false
		for total < mb.End-mb.Start {
			ord := flat[idx]
			if tc.seqs[ord].Err != nil {
				if nSkip >= len(mb.Skipped) || mb.Skipped[nSkip].Sequence != ord {
					t.Fatalf("step %d: expected skipped %d, got %+v", step, ord, mb.Skipped)
				}
				nSkip++
			} else {
				if nDel >= len(mb.Sequences) || mb.Sequences[nDel] != ord {
					t.Fatalf("step %d: expected sequence %d at %d, got %v", step, ord, nDel, mb.Sequences)
				}
				nDel++
			}
			if eoe {
				t.Fatalf("step %d: minibatch crosses the end of epoch %d (invariant 4)", step, e)
			}
			if cfg.CutAtSweep && total > 0 && (pos+total)%M == 0 {
				t.Fatalf("step %d: minibatch crosses a sweep end with CutAtSweep (invariant 3)", step)
			}
			total += uint64(l.Samples[ord])
			C += uint64(l.LabelCount(ord))
			idx++
			switch cfg.EpochSize {
			case EpochFull:
				eoe = (pos+total)%M == 0
			case EpochInf:
			default:
				eoe = C/uint64(cfg.EpochSize) > uint64(e)
			}
		}
		if nDel != len(mb.Sequences) || nSkip != len(mb.Skipped) || total != mb.End-mb.Start {
			t.Fatalf("step %d: %d+%d sequences, %d samples; minibatch has %d+%d, [%d,%d)", step, nDel, nSkip, total, len(mb.Sequences), len(mb.Skipped), mb.Start, mb.End)
		}
		// Invariant 1: within K unless a single sequence; maximal unless cut.
		if nDel+nSkip > 1 && total > uint64(K) {
			t.Fatalf("step %d: %d samples > K=%d", step, total, K)
		}
		cut := eoe || (cfg.CutAtSweep && (pos+total)%M == 0)
		if !cut && total+uint64(l.Samples[flat[idx]]) <= uint64(K) {
			t.Fatalf("step %d: stopped at %d samples although the next sequence (%d) fits K=%d", step, total, l.Samples[flat[idx]], K)
		}
		if mb.EndOfEpoch != eoe {
			t.Fatalf("step %d: EndOfEpoch %v, want %v", step, mb.EndOfEpoch, eoe)
		}
		if want := (pos+total)/M > pos/M; mb.EndOfSweep != want {
			t.Fatalf("step %d: EndOfSweep %v, want %v", step, mb.EndOfSweep, want)
		}
		// Per-stream sample counts add up.
		for _, b := range mb.Streams {
			if len(b.SeqStart) != len(mb.Sequences)+1 {
				t.Fatalf("step %d: stream %s has %d sequence starts", step, b.Name, len(b.SeqStart))
			}
		}
		pos += total
	}
}

// TestOneSampleKInvariance checks invariant 2 on one-sample corpora: 2K =
// K+K, K x 1 = K, and M/K calls cover every sample once.
func TestOneSampleKInvariance(t *testing.T) {
	for seed := uint64(0); seed < 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 2))
		tc := makeCorpus(t, rng, corpusOpts{n: 2 + rng.IntN(60), oneSample: true, chunkSeq: 1 + rng.IntN(8)})
		M := int(tc.Layout().TotalSamples())
		for _, kind := range kinds() {
			cfg := randomConfig(rng, kind)
			cfg.EpochSize = EpochInf
			K := 1 + rng.IntN(M)
			a, b, c := mustNew(t, tc, cfg), mustNew(t, tc, cfg), mustNew(t, tc, cfg)
			for step := 0; step < 3*M/K+2; step++ {
				big, err := a.NextK(2 * K)
				if err != nil {
					t.Fatal(err)
				}
				want := append([]int(nil), big.Sequences...)
				var twice []int
				for i := 0; i < 2; i++ {
					mb, _ := b.NextK(K)
					twice = append(twice, mb.Sequences...)
				}
				var ones []int
				for i := 0; i < 2*K; i++ {
					mb, _ := c.NextK(1)
					if len(mb.Sequences) != 1 {
						t.Fatalf("NextK(1) gave %d sequences", len(mb.Sequences))
					}
					ones = append(ones, mb.Sequences...)
				}
				if !reflect.DeepEqual(want, twice) || !reflect.DeepEqual(want, ones) {
					t.Fatalf("%s K=%d step %d: 2K %v, K+K %v, 1x2K %v", kind, K, step, want, twice, ones)
				}
			}
			// Coverage: with K dividing M, M/K calls see every sample once.
			for K := 1; K <= M; K++ {
				if M%K != 0 || rng.IntN(3) != 0 {
					continue
				}
				s := mustNew(t, tc, cfg)
				if err := s.Seek(uint64(rng.IntN(4)) * uint64(M)); err != nil {
					t.Fatal(err)
				}
				seen := make([]int, M)
				for i := 0; i < M/K; i++ {
					mb, _ := s.NextK(K)
					for _, o := range mb.Sequences {
						seen[o]++
					}
				}
				for o, n := range seen {
					if n != 1 {
						t.Fatalf("%s K=%d: sample %d seen %d times", kind, K, o, n)
					}
				}
			}
		}
	}
}

// TestOrderIndependentOfK checks invariant 2 on variable-length sequences:
// the concatenated sequence order is the same whatever sizes are asked.
func TestOrderIndependentOfK(t *testing.T) {
	for seed := uint64(0); seed < 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		tc := makeCorpus(t, rng, corpusOpts{n: 1 + rng.IntN(50), chunkSeq: 1 + rng.IntN(5), maxLen: 8})
		M := tc.Layout().TotalSamples()
		for _, kind := range kinds() {
			cfg := randomConfig(rng, kind)
			cfg.EpochSize = EpochInf
			var ref []int
			for trial := 0; trial < 3; trial++ {
				s := mustNew(t, tc, cfg)
				var got []int
				for s.Position() < 3*M {
					mb, err := s.NextK(1 + rng.IntN(int(M)+3))
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, mb.Sequences...)
				}
				if s.Position() != 3*M {
					continue // ended past 3M: compare only whole runs that end there
				}
				if ref == nil {
					ref = got
				} else if !reflect.DeepEqual(ref, got) {
					t.Fatalf("%s: order depends on K:\n%v\n%v", kind, ref, got)
				}
			}
		}
	}
}

// TestSweepsArePermutations checks invariant 3: each sweep visits every
// sequence once, and (randomized kinds, enough sequences) sweeps differ.
func TestSweepsArePermutations(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	tc := makeCorpus(t, rng, corpusOpts{n: 30, chunkSeq: 3})
	M := tc.Layout().TotalSamples()
	for _, kind := range kinds() {
		cfg := Config{EpochSize: EpochFull}
		cfg.Randomize.Kind = kind
		s := mustNew(t, tc, cfg)
		var sweeps [][]int
		for sw := 0; sw < 4; sw++ {
			var order []int
			for s.Position() < uint64(sw+1)*M {
				mb, _ := s.NextK(7)
				if mb.Sweep != uint64(sw) {
					t.Fatalf("%s: minibatch of sweep %d reports sweep %d", kind, sw, mb.Sweep)
				}
				order = append(order, mb.Sequences...)
			}
			seen := map[int]bool{}
			for _, o := range order {
				seen[o] = true
			}
			if len(order) != 30 || len(seen) != 30 {
				t.Fatalf("%s sweep %d is not a permutation: %v", kind, sw, order)
			}
			sweeps = append(sweeps, order)
		}
		if kind != "none" && reflect.DeepEqual(sweeps[0], sweeps[1]) && reflect.DeepEqual(sweeps[1], sweeps[2]) {
			t.Errorf("%s: sweeps 0..2 have the same order", kind)
		}
	}
}

// oneSampleCorpus has n one-sample sequences, chunkSeq per chunk.
func oneSampleCorpus(t testing.TB, n, chunkSeq int) *testCorpus {
	return makeCorpus(t, rand.New(rand.NewPCG(1, 1)), corpusOpts{n: n, oneSample: true, chunkSeq: chunkSeq})
}

// TestSweepEndFlagsCNTK ports MinibatchSourceTest's end-of-sweep cases
// (603-sample sweep): each minibatch has min(mb, remaining) samples and
// end_of_sweep is set exactly when it ends at or crosses a multiple of 603.
func TestSweepEndFlagsCNTK(t *testing.T) {
	tc := oneSampleCorpus(t, 603, 50)
	cases := []struct {
		epoch EpochSize
		mb    int
	}{{EpochFull, 603}, {EpochFull, 1000}, {EpochFull, 100}, {100, 30}, {2000, 500}, {2412, 301}}
	for _, kind := range kinds() {
		for _, c := range cases {
			cfg := Config{EpochSize: c.epoch, Schedule: ConstantSchedule(c.mb)}
			cfg.Randomize.Kind = kind
			s := mustNew(t, tc, cfg)
			size := uint64(c.epoch)
			if c.epoch == EpochFull {
				size = 603
			}
			for pos := uint64(0); pos < size; {
				mb, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				want := min(uint64(c.mb), size-pos)
				if c.epoch == EpochFull {
					want = min(uint64(c.mb), 603-pos%603)
				}
				n := mb.End - mb.Start
				if n != want || uint64(len(mb.Sequences)) != want {
					t.Fatalf("%s %v/%d at %d: %d samples, %d sequences; want %d", kind, c.epoch, c.mb, pos, n, len(mb.Sequences), want)
				}
				eos := (mb.End/603)*603 > mb.Start // a multiple of 603 in (Start, End]
				if mb.EndOfSweep != eos {
					t.Fatalf("%s %v/%d: [%d,%d) end_of_sweep %v", kind, c.epoch, c.mb, mb.Start, mb.End, mb.EndOfSweep)
				}
				pos = mb.End
				if mb.EndOfEpoch != (pos == size) {
					t.Fatalf("%s %v/%d: end_of_epoch %v at %d", kind, c.epoch, c.mb, mb.EndOfEpoch, pos)
				}
			}
		}
	}
}

// TestIOTestsCases ports cntk/io/tests/io_tests.py cases where they apply
// (the reader there is bounded by max_samples/max_sweeps; here the epoch
// size plays that role).
func TestIOTestsCases(t *testing.T) {
	four := oneSampleCorpus(t, 4, 2)
	type want struct {
		n        uint64
		eos, eoe bool
	}
	run := func(name string, src corpus.Source, epoch EpochSize, mb int, ws []want) {
		cfg := Config{EpochSize: epoch, Schedule: ConstantSchedule(mb)}
		cfg.Randomize.Kind = "none"
		s := mustNew(t, src, cfg)
		for i, w := range ws {
			m, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			if m.End-m.Start != w.n || m.EndOfSweep != w.eos || m.EndOfEpoch != w.eoe {
				t.Errorf("%s #%d: %d samples eos %v eoe %v; want %+v", name, i, m.End-m.Start, m.EndOfSweep, m.EndOfEpoch, w)
			}
		}
	}
	// test_max_sweeps: 4-sample file, 3 sweeps, mb 5 -> 5 (eos), 5 (eos), 2 (eos).
	run("max_sweeps", four, 12, 5, []want{{5, true, false}, {5, true, false}, {2, true, true}})
	// test_max_samples_over_several_sweeps: 11 -> 5, 5, 1 (no eos).
	run("max_samples_over_sweeps", four, 11, 5, []want{{5, true, false}, {5, true, false}, {1, false, true}})
	// test_max_samples: max 1 -> 1 sample, not end of sweep.
	run("max_samples", four, 1, 5, []want{{1, false, true}})
	// test_one_sweep: a full sweep of mb 10 is the 4 samples.
	run("one_sweep", four, EpochFull, 10, []want{{4, true, true}, {4, true, true}})

	// test_full_sweep_minibatch: MBDATA_DENSE_1, two sequences of 4 and 3
	// samples with jagged labels of 3 and 2; mb 1000 over one sweep.
	f := func(v ...float32) [][]float32 {
		var o [][]float32
		for _, x := range v {
			o = append(o, []float32{x})
		}
		return o
	}
	m, err := corpus.NewMemory([]corpus.Stream{{Name: "features", Dim: 1}, {Name: "labels", Dim: 1}}, []corpus.MemorySequence{
		{ID: "0", Streams: []corpus.MemoryStream{{Dense: f(0, 1, 2, 3)}, {Dense: f(0, 1, 3)}}},
		{ID: "1", Streams: []corpus.MemoryStream{{Dense: f(4, 5, 6)}, {Dense: f(1, 2)}}},
	}, corpus.MemoryConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Schedule: ConstantSchedule(1000)}
	cfg.Randomize.Kind = "none"
	s := mustNew(t, m, cfg)
	mb, _ := s.Next()
	if !reflect.DeepEqual(mb.Sequences, []int{0, 1}) || mb.End != 7 || !mb.EndOfSweep ||
		!reflect.DeepEqual(mb.Streams[0].Dense, []float32{0, 1, 2, 3, 4, 5, 6}) || !reflect.DeepEqual(mb.Streams[0].SeqStart, []int32{0, 4, 7}) ||
		!reflect.DeepEqual(mb.Streams[1].Dense, []float32{0, 1, 3, 1, 2}) || !reflect.DeepEqual(mb.Streams[1].SeqStart, []int32{0, 3, 5}) {
		t.Errorf("full_sweep_minibatch: %+v", mb)
	}

	// test_minibatch_defined_by_labels: with labels defining the size, mb 2
	// gives 2 label samples (and the features of those sequences).
	mt, err := corpus.NewMemory([]corpus.Stream{{Name: "features", Dim: 1}, {Name: "labels", Dim: 1}}, []corpus.MemorySequence{
		{ID: "0", Streams: []corpus.MemoryStream{{Dense: f(0, 1, 2, 3)}, {Dense: f(0)}}},
		{ID: "1", Streams: []corpus.MemoryStream{{Dense: f(4, 5, 6)}, {Dense: f(1)}}},
		{ID: "2", Streams: []corpus.MemoryStream{{Dense: f(7, 8, 9)}, {Dense: f(2)}}},
	}, corpus.MemoryConfig{DefinesMBSize: "labels"})
	if err != nil {
		t.Fatal(err)
	}
	s = mustNew(t, mt, cfg)
	mb, _ = s.NextK(2)
	if mb.Streams[0].Samples() != 7 || mb.Streams[1].Samples() != 2 {
		t.Errorf("defined_by_labels mb 2: features %d labels %d, want 7 and 2", mb.Streams[0].Samples(), mb.Streams[1].Samples())
	}
	s = mustNew(t, mt, cfg)
	mb, _ = s.NextK(3)
	if mb.Streams[0].Samples() != 10 || mb.Streams[1].Samples() != 3 {
		t.Errorf("defined_by_labels mb 3: features %d labels %d, want 10 and 3", mb.Streams[0].Samples(), mb.Streams[1].Samples())
	}
}

// TestEpochsSkipAndSchedule checks invariants 4 and 5 on an exact case: a
// sequence with more labels than the epoch size closes one epoch and the
// next minibatch reports the epoch after the skipped ones; the schedule
// follows the reported epoch; OnEpochEnd sees each ended epoch once.
func TestEpochsSkipAndSchedule(t *testing.T) {
	f := func(n int) [][]float32 { return make([][]float32, n) }
	mk := func(samples, labels int) corpus.MemorySequence {
		x := f(samples)
		for i := range x {
			x[i] = []float32{1}
		}
		l := f(labels)
		for i := range l {
			l[i] = []float32{2}
		}
		return corpus.MemorySequence{Streams: []corpus.MemoryStream{{Dense: x}, {Dense: l}}}
	}
	// Labels per sequence: 1 1 7 1 1 1; epoch size 3.
	seqs := []corpus.MemorySequence{mk(1, 1), mk(1, 1), mk(1, 7), mk(1, 1), mk(1, 1), mk(1, 1)}
	m, err := corpus.NewMemory([]corpus.Stream{{Name: "x", Dim: 1}, {Name: "l", Dim: 1}}, seqs, corpus.MemoryConfig{DefinesMBSize: "x", Label: "l"})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := ParseSchedule("2:1*2:4")
	var ended []int
	cfg := Config{EpochSize: 3, Schedule: sc, OnEpochEnd: func(e int, st State) { ended = append(ended, e) }}
	cfg.Randomize.Kind = "none"
	s := mustNew(t, m, cfg)
	type row struct {
		epoch int
		seqs  []int
		eoe   bool
	}
	// C before each sequence: 0 1 2 9 10 11 | 12 13 14 21 22 23 | 24
	want := []row{
		{0, []int{0, 1}, false},   // K=2
		{0, []int{2}, true},       // C reaches 9 >= 3: epoch 0 ends; epochs 1, 2 are empty
		{3, []int{3, 4, 5}, true}, // epoch 3 (K=4) ends when C reaches 12
		{4, []int{0, 1, 2}, true}, // C 14 -> 21 passes 15, 18 and 21
		{7, []int{3, 4, 5}, true},
		{8, []int{0, 1, 2}, true},
	}
	for i, w := range want {
		mb, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if mb.Epoch != w.epoch || !reflect.DeepEqual(mb.Sequences, w.seqs) || mb.EndOfEpoch != w.eoe {
			t.Fatalf("#%d: epoch %d seqs %v eoe %v; want %+v", i, mb.Epoch, mb.Sequences, mb.EndOfEpoch, w)
		}
	}
	if !reflect.DeepEqual(ended, []int{0, 3, 4, 7, 8}) {
		t.Errorf("OnEpochEnd epochs %v", ended)
	}
}

// TestCutAtSweep checks invariant 3's CutAtSweep: a minibatch ends at the
// sweep end and the next starts the new sweep.
func TestCutAtSweep(t *testing.T) {
	tc := oneSampleCorpus(t, 10, 3)
	for _, cut := range []bool{false, true} {
		cfg := Config{EpochSize: EpochInf, CutAtSweep: cut}
		cfg.Randomize.Kind = "none"
		s := mustNew(t, tc, cfg)
		var sizes []uint64
		for i := 0; i < 4; i++ {
			mb, _ := s.NextK(4)
			sizes = append(sizes, mb.End-mb.Start)
		}
		want := []uint64{4, 4, 4, 4}
		if cut {
			want = []uint64{4, 4, 2, 4}
		}
		if !reflect.DeepEqual(sizes, want) {
			t.Errorf("cut %v: sizes %v, want %v", cut, sizes, want)
		}
	}
}

// TestFirstSequenceAlwaysTaken checks invariant 1's exception.
func TestFirstSequenceAlwaysTaken(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	tc := makeCorpus(t, rng, corpusOpts{n: 20, maxLen: 9, chunkSeq: 4})
	cfg := Config{EpochSize: EpochInf}
	cfg.Randomize.Kind = "none"
	s := mustNew(t, tc, cfg)
	for i := 0; i < 30; i++ {
		mb, _ := s.NextK(1)
		if len(mb.Sequences)+len(mb.Skipped) != 1 {
			t.Fatalf("NextK(1) gave %d sequences", len(mb.Sequences))
		}
	}
	if _, err := s.NextK(0); !errors.Is(err, ErrBadK) {
		t.Errorf("NextK(0): %v", err)
	}
}

// TestMaxSweepsCNTK ports MinibatchSourceTest's max_sweeps cases: reading an
// epoch of k sweeps with crossing allowed, the number of end-of-sweep flags
// is k whatever the minibatch size (below the sweep size).
func TestMaxSweepsCNTK(t *testing.T) {
	tc := oneSampleCorpus(t, 603, 50)
	for _, kind := range kinds() {
		for _, sweeps := range []uint64{2, 3} {
			for _, mb := range []int{1, 7, 100, 301, 602} {
				cfg := Config{EpochSize: EpochSize(sweeps * 603), Schedule: ConstantSchedule(mb)}
				cfg.Randomize.Kind = kind
				s := mustNew(t, tc, cfg)
				n := uint64(0)
				for s.Epoch() == 0 {
					m, err := s.Next()
					if err != nil {
						t.Fatal(err)
					}
					if m.EndOfSweep {
						n++
					}
				}
				if n != sweeps || s.Position() != sweeps*603 {
					t.Errorf("%s sweeps=%d mb=%d: %d end_of_sweep flags, position %d", kind, sweeps, mb, n, s.Position())
				}
			}
		}
	}
}

// TestEpochBoundarySingleWorker ports ReaderLibTests'
// CheckEpochBoundarySingleWorker: epoch size 447, minibatch 128 gives
// 128, 128, 128, 63, and the next epoch starts fresh.
func TestEpochBoundarySingleWorker(t *testing.T) {
	tc := oneSampleCorpus(t, 1000, 100)
	for _, kind := range kinds() {
		cfg := Config{EpochSize: 447, Schedule: ConstantSchedule(128)}
		cfg.Randomize.Kind = kind
		s := mustNew(t, tc, cfg)
		var got []uint64
		for i := 0; i < 5; i++ {
			m, _ := s.Next()
			got = append(got, m.End-m.Start)
		}
		if !reflect.DeepEqual(got, []uint64{128, 128, 128, 63, 128}) {
			t.Errorf("%s: sizes %v", kind, got)
		}
	}
}

// TestSeedsAreMixed: unlike CNTK (seed+sweep), sweep 1 of seed 0 is not
// sweep 0 of seed 1 for the window randomizer.
func TestSeedsAreMixed(t *testing.T) {
	tc := oneSampleCorpus(t, 64, 4)
	order := func(seed uint64, sweep int) []int {
		cfg := Config{EpochSize: EpochInf}
		cfg.Randomize.Kind, cfg.Randomize.Seed = "window", seed
		s := mustNew(t, tc, cfg)
		if err := s.Seek(uint64(sweep) * 64); err != nil {
			t.Fatal(err)
		}
		m, _ := s.NextK(64)
		return append([]int(nil), m.Sequences...)
	}
	if reflect.DeepEqual(order(0, 1), order(1, 0)) {
		t.Error("window: sweep 1 of seed 0 equals sweep 0 of seed 1")
	}
}
