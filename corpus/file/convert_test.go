package file

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/parquet"
	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/internal/shared"
)

var atisStreams = []corpus.Stream{{Name: "S0", Dim: 943, Sparse: true}, {Name: "S1", Dim: 26, Sparse: true}, {Name: "S2", Dim: 129, Sparse: true}}

// atisParquet converts ATIS train to Parquet (small row groups, so that
// chunks span them) and returns both paths.
func atisParquet(t *testing.T) (ctfPath, pqPath string) {
	t.Helper()
	ctfPath = shared.Need(t, "ctf", "atis", "atis.train.ctf")
	r, err := ctf.Open(ctfPath, ctf.Config{Streams: atisStreams, ChunkSequences: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pqPath = filepath.Join(t.TempDir(), "atis.parquet")
	st, err := ToParquet(r, pqPath, parquet.WriterOptions{RowGroupRows: 777})
	if err != nil {
		t.Fatal(err)
	}
	if st.Sequences != int64(r.Layout().NumSequences()) {
		t.Fatalf("wrote %d sequences, want %d", st.Sequences, r.Layout().NumSequences())
	}
	pr, err := parquet.Open(pqPath, ParquetConfig(ctf.Config{Streams: atisStreams}))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	if n := r.Layout().NumSequences(); pr.RowGroups() != (n+776)/777 {
		t.Fatalf("%d row groups, want %d", pr.RowGroups(), (n+776)/777)
	}
	for s, f := range st.Forms {
		if f != parquet.OneHot {
			t.Errorf("stream %s written %s, want one-hot", atisStreams[s].Name, f)
		}
	}
	return ctfPath, pqPath
}

// minibatches renders every minibatch of two epochs as text.
func minibatches(t *testing.T, path string, cfg ctf.Config, scfg source.Config) []string {
	t.Helper()
	r, err := Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return twoEpochs(t, r, scfg)
}

// twoEpochs renders every minibatch of two epochs of r as text.
func twoEpochs(t *testing.T, r Reader, scfg source.Config) []string {
	t.Helper()
	src, err := source.New(r, scfg)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out []string
	for src.Epoch() < 2 {
		mb, err := src.Next()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "%d %d %d %d %v %v %v %v", mb.Step, mb.Epoch, mb.Start, mb.End, mb.EndOfSweep, mb.Sequences, mb.IDs, len(mb.Skipped))
		for _, s := range mb.Streams {
			fmt.Fprintf(&b, " | %v %v %v %v %v", s.SeqStart, s.Dense, s.RowStart, s.Indices, s.Values)
		}
		out = append(out, b.String())
	}
	return out
}

// TestATISParquetSameMinibatches: ATIS converted to Parquet gives the
// minibatches of the CTF file, for each randomizer and worker count
// (invariant 2).
func TestATISParquetSameMinibatches(t *testing.T) {
	ctfPath, pqPath := atisParquet(t)
	cfg := ctf.Config{Streams: atisStreams, ChunkSequences: 100}
	for _, c := range []struct {
		kind    string
		workers int
	}{{"none", 1}, {"window", 1}, {"window", 3}, {"cntk", 2}} {
		for rank := range c.workers {
			t.Run(fmt.Sprintf("%s/W%d/R%d", c.kind, c.workers, rank), func(t *testing.T) {
				scfg := source.Config{Randomize: randomize.Config{Kind: c.kind, Seed: 7, WindowChunks: 5},
					Schedule: source.ConstantSchedule(500), Workers: c.workers, Rank: rank, Prefetch: true}
				want := minibatches(t, ctfPath, cfg, scfg)
				got := minibatches(t, pqPath, cfg, scfg)
				if len(got) != len(want) {
					t.Fatalf("%d minibatches from Parquet, %d from CTF", len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("minibatch %d differs:\nparquet %.300s\nctf     %.300s", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// TestRoundTripCTFParquetCTF: CTF -> Parquet -> CTF gives back a file that
// reads as the original (same layout, ids and data; invariant 2).
func TestRoundTripCTFParquetCTF(t *testing.T) {
	ctfPath, pqPath := atisParquet(t)
	cfg := ctf.Config{Streams: atisStreams, ChunkSequences: 100}
	pr, err := Open(pqPath, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	back := filepath.Join(t.TempDir(), "back.ctf")
	st, err := ToCTF(pr, back)
	if err != nil {
		t.Fatal(err)
	}
	if st.RenumberedIDs != 0 {
		t.Errorf("%d ids renumbered, want 0", st.RenumberedIDs)
	}
	a, b := loadAll(t, ctfPath, cfg), loadAll(t, back, cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the round trip changed the corpus")
	}
	if a := loadAll(t, pqPath, cfg); !reflect.DeepEqual(a, b) {
		t.Fatal("the Parquet file reads unlike the CTF file")
	}
}

type flat struct {
	Layout  [][]uint32
	IDs     []string
	Streams [][]corpus.StreamData
}

// loadAll reads every chunk of a corpus, copying the shared arrays so that
// DeepEqual compares values.
func loadAll(t *testing.T, path string, cfg ctf.Config) flat {
	t.Helper()
	r, err := Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l := r.Layout()
	var f flat
	var starts []uint32
	for _, c := range l.ChunkStart {
		starts = append(starts, uint32(c))
	}
	f.Layout = [][]uint32{starts, slices.Clone(l.Samples)} // the tables may be mapped: valid until Close
	for c := range l.NumChunks() {
		ch, err := r.LoadChunk(c)
		if err != nil {
			t.Fatal(err)
		}
		f.IDs = append(f.IDs, ch.IDs...)
		var sd []corpus.StreamData
		for _, d := range ch.Streams {
			n := d.SeqStart[len(d.SeqStart)-1]
			e := int32(0)
			if d.RowStart != nil {
				e = d.RowStart[n]
			}
			sd = append(sd, corpus.StreamData{SeqStart: append([]int32{}, d.SeqStart...), Dense: append([]float32{}, d.Dense...),
				RowStart: append([]int32{}, d.RowStart[:min(len(d.RowStart), int(n)+1)]...),
				Indices:  append([]int32{}, d.Indices[:e]...), Values: append([]float32{}, d.Values[:e]...)})
		}
		f.Streams = append(f.Streams, sd)
	}
	return f
}

func TestDetect(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.data")
	os.WriteFile(p, []byte("PAR1...."), 0o644)
	if Detect(p) != Parquet {
		t.Error("a file starting with PAR1 is not detected as Parquet")
	}
	q := filepath.Join(dir, "y.parquet")
	os.WriteFile(q, []byte("0 |x 1\n"), 0o644)
	if Detect(q) != Parquet {
		t.Error("a .parquet file is not detected as Parquet")
	}
	c := filepath.Join(dir, "z.ctf")
	os.WriteFile(c, []byte("0 |x 1\n"), 0o644)
	if Detect(c) != CTF {
		t.Error("a CTF file is detected as Parquet")
	}
	if _, err := Open(q, ctf.Config{Streams: []corpus.Stream{{Name: "x", Dim: 1}}}); err == nil {
		t.Error("a .parquet file holding text opened")
	}
}

// TestToCTFRenumbersIDs: ids CTF cannot hold (not digits, or repeating the
// previous one) become row numbers, and are counted.
func TestToCTFRenumbersIDs(t *testing.T) {
	dir := t.TempDir()
	streams := []corpus.Stream{{Name: "x", Dim: 1}}
	ch := &corpus.Chunk{IDs: []string{"7", "q", "9", "9"}, Streams: []corpus.StreamData{{SeqStart: []int32{0, 1, 2, 3, 4}, Dense: []float32{1, 2, 3, 4}}}}
	pq := filepath.Join(dir, "c.parquet")
	f, err := os.Create(pq)
	if err != nil {
		t.Fatal(err)
	}
	w, err := parquet.NewWriter(f, streams, parquet.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(ch); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, err := Open(pq, ctf.Config{Streams: streams})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := filepath.Join(dir, "c.ctf")
	st, err := ToCTF(r, out)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	if st.RenumberedIDs != 2 || string(b) != "7 |x 1\n1 |x 2\n9 |x 3\n3 |x 4\n" {
		t.Errorf("renumbered %d, wrote %q", st.RenumberedIDs, b)
	}
}
