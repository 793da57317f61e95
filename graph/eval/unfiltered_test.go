package eval

import (
	"fmt"
	"reflect"
	"testing"
)

// Invariant 8: the unfiltered ranking equals a brute-force ranking that
// leaves out only the true entity itself, edge by edge and on both sides,
// among all entities and within the true entity's partition; it differs
// from the filtered ranking on these graphs (other true edges compete),
// and the report says it is unfiltered.
func TestUnfilteredRanksEqualBruteForce(t *testing.T) {
	for _, o := range []worldOpts{
		{parts: 1, seed: 21}, {parts: 3, seed: 22}, {parts: 2, dynamic: true, seed: 23},
		{parts: 2, disableLhs: true, seed: 24},
	} {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			w := newWorld(t, o)
			// Duplicate test edges and train edges among the test edges
			// make true candidates that filtering would remove.
			test := append(append(w.files[2][:len(w.files[2]):len(w.files[2])], w.files[0][:10]...), w.files[2][:3]...)
			want, wantIn := w.brute(t, test, nil, false)
			filtered, _ := w.brute(t, test, w.files[:2], true)
			if reflect.DeepEqual(want, filtered) {
				t.Fatal("the unfiltered and filtered brute-force ranks agree: the test proves nothing")
			}
			var rep Report
			got, gotIn := w.ev.ranksKnown(w.ev.Resolve(test), [2]map[[2]uint32][]uint32{{}, {}}, &rep)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("unfiltered ranks differ from the brute force:\n got %v\nwant %v", got, want)
			}
			if !reflect.DeepEqual(gotIn, wantIn) {
				t.Fatalf("unfiltered ranks within the partition differ from the brute force:\n got %v\nwant %v", gotIn, wantIn)
			}
			full := w.ev.RankEdgesUnfiltered(w.ev.Resolve(test))
			var sum float64
			var n int
			for _, rs := range want {
				for _, r := range rs {
					sum += 1 / r
					n++
				}
			}
			if full.Filtered || full.Count != int64(n) || full.MRR != sum/float64(n) {
				t.Errorf("report: filtered %v, count %d, MRR %v; want unfiltered, count %d, MRR %v", full.Filtered, full.Count, full.MRR, n, sum/float64(n))
			}
			if f := w.ev.RankEdges(w.ev.Resolve(test), w.ev.Resolve(w.files[0])); !f.Filtered || f.MRR < full.MRR {
				t.Errorf("filtered report: filtered %v, MRR %v below the unfiltered %v", f.Filtered, f.MRR, full.MRR)
			}
		})
	}
}
