package train_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/train"
)

// countStore is a store of which PredictIO reads only counts: entities
// spread evenly over parts partitions of one type, edges evenly over the
// buckets. Its edges cannot be read.
type countStore struct{ parts, entities, edges int }

func (s countStore) Partitions() (int, int) { return s.parts, s.parts }
func (s countStore) NumEdgeSets() int       { return 1 }
func (s countStore) NumEdges(int, graph.Bucket) (int, error) {
	return s.edges / (s.parts * s.parts), nil
}
func (s countStore) ReadEdges(int, graph.Bucket, int, int, *graph.Edges) error {
	return errors.New("countStore holds counts only")
}
func (s countStore) EntityCount(_ string, p int) (int, error) {
	n := s.entities / s.parts
	if p < s.entities%s.parts {
		n++
	}
	return n, nil
}
func (s countStore) NumRelations() int   { return 1 }
func (s countStore) Fingerprint() string { return "counts" }

// scaleIO is PredictIO's traffic of the first two epochs (in the first,
// partitions are initialized, not read; from the second on, every
// partition has a file: the steady state) of one relation over one entity
// type of entities rows in parts partitions, d = 100, inside_out, with a
// commit every `every` buckets (0: the default).
func scaleIO(t *testing.T, parts, entities, edges, every int) []train.EpochIO {
	t.Helper()
	text := fmt.Sprintf(`entity_path = "e"
edge_paths = ["p"]
checkpoint_path = "c"
dimension = 100
num_epochs = 2
workers = 2
checkpoint_buckets = %d
[entities.all]
num_partitions = %d
[[relations]]
name = "r0"
lhs = "all"
rhs = "all"
operator = "complex_diagonal"
`, every, parts)
	cfg, err := config.Parse([]byte(text), "toml")
	if err != nil {
		t.Fatal(err)
	}
	io, err := train.PredictIO(cfg, countStore{parts, entities, edges})
	if err != nil {
		t.Fatal(err)
	}
	return io
}

// The disk traffic per epoch that docs/performance-train.md ("Partition
// I/O at scale") gives, computed by PredictIO for the graphs of that section: 4.8 M
// entities in 8 partitions, 20 M in 16, d = 100, inside_out. A commit
// every P buckets (the default, at the end of a buffer state) writes under
// 0.4x what a commit after every bucket writes, and at most 1.2x what a
// commit once per epoch (as PBG) writes; the bytes read do not depend on the commits. The saves are
// pinned (the docs give them); go test -run TestPredictIOScaleFigures -v
// prints the table.
func TestPredictIOScaleFigures(t *testing.T) {
	for _, g := range []struct {
		parts, entities, edges int
		saves                  [2][3]int64 // by epoch: every bucket, every P, once per epoch
	}{
		{8, 4_800_000, 69_000_000, [2][3]int64{{120, 36, 31}, {120, 37, 34}}},
		{16, 20_000_000, 100_000_000, [2][3]int64{{496, 140, 127}, {496, 141, 131}}},
	} {
		each := train.TableFileBytes(g.entities/g.parts, 100)
		runs := [3][]train.EpochIO{scaleIO(t, g.parts, g.entities, g.edges, 1), scaleIO(t, g.parts, g.entities, g.edges, 0),
			scaleIO(t, g.parts, g.entities, g.edges, 1<<30)}
		names := []string{"every bucket (checkpoint_buckets = 1)", fmt.Sprintf("every %d buckets (the default)", g.parts), "once per epoch"}
		for e := range 2 {
			for i, io := range runs {
				c := io[e]
				t.Logf("%d entities, P = %d, partition file %.1f MiB, epoch %d, commit %s: read %.1f GiB in %d loads, wrote %.1f GiB in %d saves",
					g.entities, g.parts, float64(each)/(1<<20), e+1, names[i], float64(c.LoadBytes)/(1<<30), c.Loads, float64(c.SaveBytes)/(1<<30), c.Saves)
				if c.Saves != g.saves[e][i] {
					t.Errorf("P = %d, epoch %d, commit %s: %d saves, want %d", g.parts, e+1, names[i], c.Saves, g.saves[e][i])
				}
				if c.Loads != runs[0][e].Loads {
					t.Errorf("P = %d, epoch %d: the loads depend on the commits: %d and %d", g.parts, e+1, c.Loads, runs[0][e].Loads)
				}
			}
			every, byRow, once := runs[0][e].Saves, runs[1][e].Saves, runs[2][e].Saves
			// After every bucket: every bucket writes its partitions, two
			// off the diagonal, one on it.
			if every != int64(2*g.parts*g.parts-g.parts) || 10*byRow >= 4*every || 10*byRow > 12*once {
				t.Errorf("P = %d, epoch %d: saves %d (every bucket), %d (every P), %d (once per epoch)", g.parts, e+1, every, byRow, once)
			}
		}
	}
}

// The buffer's I/O at scale: on the 20 M-entity graph (P = 16) with the
// buffer order, a buffer of 4 reads at most 46 partition files per steady
// epoch and a buffer of 8 at most 25 (bucket.BufferLoads of its order),
// against 131 with inside_out and 2 partitions. The memory budget chooses
// the largest buffer that fits (FitBuffer), with a partition in flight
// when that fits too.
func TestPredictIOBuffer(t *testing.T) {
	text := `entity_path = "e"
edge_paths = ["p"]
checkpoint_path = "c"
dimension = 100
num_epochs = 2
workers = 2
bucket_order = "buffer"
partition_buffer = %d
[entities.all]
num_partitions = 16
[[relations]]
name = "r0"
lhs = "all"
rhs = "all"
operator = "complex_diagonal"
`
	st := countStore{16, 20_000_000, 100_000_000}
	for c, most := range map[int]int64{4: 46, 8: 25} {
		cfg, err := config.Parse([]byte(fmt.Sprintf(text, c)), "toml")
		if err != nil {
			t.Fatal(err)
		}
		io, err := train.PredictIO(cfg, st)
		if err != nil {
			t.Fatal(err)
		}
		if io[1].Loads > most || io[1].Loads < 10 {
			t.Errorf("c = %d: %d loads in the second epoch, want at most %d", c, io[1].Loads, most)
		}
		t.Logf("c = %d: %+v", c, io)
		pr, err := train.Predict(cfg, st, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		cfg.PartitionBuffer = 0
		got, fit, err := train.FitBuffer(cfg, st, pr.Peak, "memory_limit")
		if err != nil {
			t.Fatal(err)
		}
		if got != c+1 || !fit.Fits() || fit.Prefetch {
			t.Errorf("a budget of c = %d's peak with one in flight chooses c = %d (%+v); want %d, I/O in turn", c, got, fit, c+1)
		}
		if got, fit, _ := train.FitBuffer(cfg, st, pr.Peak-1, "memory_limit"); got != c || fit.Prefetch {
			t.Errorf("a byte less than c = %d's peak chooses c = %d, prefetch %v; want %d, I/O in turn", c, got, fit.Prefetch, c)
		}
	}
}

// The default commit interval waits for the end of a buffer state
// (commitclock.go): on the 20 M-entity graph (P = 16), for inside_out
// with 2 partitions and the buffer order with 3, 4 and 8, it writes
// fewer bytes per epoch than an explicit checkpoint_buckets of the same
// value, which commits exactly every that many buckets, and reads the
// same.
func TestCommitsAtStateEnds(t *testing.T) {
	st := countStore{16, 20_000_000, 100_000_000}
	for _, tc := range []struct {
		order string
		c     int
	}{{"inside_out", 2}, {"buffer", 3}, {"buffer", 4}, {"buffer", 8}} {
		var io [2][]train.EpochIO
		for i, explicit := range []bool{false, true} {
			text := fmt.Sprintf("entity_path = \"e\"\nedge_paths = [\"p\"]\ncheckpoint_path = \"c\"\ndimension = 100\nnum_epochs = 2\n"+
				"bucket_order = %q\npartition_buffer = %d\n[entities.all]\nnum_partitions = 16\n"+
				"[[relations]]\nname = \"r0\"\nlhs = \"all\"\nrhs = \"all\"\noperator = \"complex_diagonal\"\n", tc.order, tc.c)
			cfg, err := config.Parse([]byte(text), "toml")
			if err != nil {
				t.Fatal(err)
			}
			if explicit {
				cfg.CheckpointBuckets = cfg.CheckpointEvery()
			}
			if io[i], err = train.PredictIO(cfg, st); err != nil {
				t.Fatal(err)
			}
		}
		for e := range 2 {
			def, exact := io[0][e], io[1][e]
			t.Logf("%s, c = %d, epoch %d: saves %d at state ends, %d exactly", tc.order, tc.c, e+1, def.Saves, exact.Saves)
			if def.Loads != exact.Loads || def.Saves >= exact.Saves {
				t.Errorf("%s, c = %d, epoch %d: loads %d and %d, saves %d (default) and %d (explicit); want equal loads, fewer saves",
					tc.order, tc.c, e+1, def.Loads, exact.Loads, def.Saves, exact.Saves)
			}
		}
	}
}
