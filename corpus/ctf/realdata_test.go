package ctf

import (
	"reflect"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/shared"
)

// Real corpora index and parse with the counts of ../shared/data/README.md
// (sequences, lines) and, where the README gives none, counts taken with an
// independent awk scan (sequence = change of leading id; stream count =
// lines matching "|NAME[ \t]").
func TestRealData(t *testing.T) {
	atis := []corpus.Stream{sparse("S0", 943), sparse("S1", 26), sparse("S2", 129)}
	cmu := []corpus.Stream{sparse("S0", 69), sparse("S1", 69)}
	for _, tc := range []struct {
		file    string
		streams []corpus.Stream
		seqs    int
		lines   uint64
		samples []int64
	}{
		{"ctf/atis/atis.train.ctf", atis, 4978, 66547, []int64{66547, 4978, 66547}},
		{"ctf/atis/atis.test.ctf", atis, 893, 10984, []int64{10984, 893, 10984}},
		{"ctf/cmudict/cmudict-0.7b.train-dev-1-21.ctf", cmu, 5447, 51820, []int64{51704, 45526}},
		{"ctf/cmudict/cmudict-0.7b.test.ctf", cmu, 12855, 122209, []int64{121904, 107479}},
		{"ctf/seqcls/Train.ctf", []corpus.Stream{sparse("x", 2000), dense("y", 5)}, 1247, 5433, []int64{5433, 1247}},
	} {
		path := shared.Need(t, tc.file)
		r, err := Open(path, Config{Streams: tc.streams, ChunkBytes: 256 << 10})
		if err != nil {
			t.Fatal(err)
		}
		l := r.Layout()
		s := r.Summary()
		if l.NumSequences() != tc.seqs || l.TotalSamples() != tc.lines || !reflect.DeepEqual(s.Samples, tc.samples) {
			t.Errorf("%s: %d sequences, %d lines, per stream %v; want %d, %d, %v", tc.file, l.NumSequences(), l.TotalSamples(), s.Samples, tc.seqs, tc.lines, tc.samples)
		}
		// Parsing agrees with the index: per-stream sample counts add up,
		// and nothing is bad.
		got := make([]int64, len(tc.streams))
		for _, ch := range loadAll(t, r) {
			for i, b := range ch.Bad {
				if b != nil {
					t.Errorf("%s: sequence %s: %v", tc.file, ch.IDs[i], b)
				}
			}
			for k := range tc.streams {
				got[k] += int64(ch.Streams[k].SeqStart[ch.Len()])
			}
		}
		if !reflect.DeepEqual(got, tc.samples) {
			t.Errorf("%s: parsed per-stream samples %v, index %v", tc.file, got, tc.samples)
		}
		if w := r.Summary().Warnings; len(w) != 0 {
			t.Errorf("%s: warnings %v", tc.file, w)
		}
		r.Close()
	}
	// Label and defines_mb_size counts on ATIS: one intent per sequence.
	r, err := Open(shared.Need(t, "ctf/atis/atis.test.ctf"), Config{Streams: atis, DefinesMBSize: "S1", Label: "S2"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if l := r.Layout(); l.TotalSamples() != 893 || l.TotalLabels() != 10984 {
		t.Errorf("atis test mb=S1 label=S2: %d samples, %d labels", l.TotalSamples(), l.TotalLabels())
	}
}
