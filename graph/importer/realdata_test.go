package importer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/internal/shared"
)

// Real graphs import with 1, 4 and 16 partitions, keeping exactly the edge
// counts of shared/data/README.md, every ordinal once.
func TestRealGraphs(t *testing.T) {
	data := shared.Need(t)
	cases := []struct {
		file  string
		edges int64
		delim Delimiter
		rel   bool
	}{
		{"kg/fb15k-237/train.txt", 272115, Tab, true}, // CRLF
		{"kg/wn18rr/train.txt", 86835, Tab, true},
		{"kg/codex-s/train.txt", 32888, Tab, true},
		{"kg/kinship/train.txt", 8544, Tab, true},
		{"kg/umls/train.txt", 5216, Tab, true},
		{"kg/nations/train.txt", 1592, Tab, true},
		{"graphs/facebook_combined.txt", 88234, Space, false},
		{"graphs/wiki-Vote.txt", 103689, Space, false}, // CRLF, comments
		{"graphs/ca-HepPh.txt", 237010, Space, false},
		{"graphs/ca-CondMat.txt", 186936, Space, false},
		{"graphs/ca-HepTh.txt", 51971, Space, false},
		{"graphs/ca-GrQc.txt", 28980, Space, false},
		{"graphs/email-Eu-core.txt", 25571, Space, false},
		{"graphs/p2p-Gnutella08.txt", 20777, Space, false},
	}
	for i, c := range cases {
		path := filepath.Join(data, c.file)
		if _, err := os.Stat(path); err != nil {
			t.Logf("skipping %s: %v", c.file, err)
			continue
		}
		parts := []int{1, 4, 16}
		if raceEnabled && i > 0 {
			// Under -race: FB15k-237 (the largest) with all three counts,
			// every other graph with one, in turn.
			parts = parts[i%3 : i%3+1]
		}
		for _, p := range parts {
			t.Run(fmt.Sprintf("%s/P%d", c.file, p), func(t *testing.T) {
				dir := t.TempDir()
				doc := fmt.Sprintf("entity_path = %q\nedge_paths = [%q]\ncheckpoint_path = \"c\"\ndynamic_relations = true\n[entities.n]\nnum_partitions = %d\n[[relations]]\nname = \"edge\"\nlhs = \"n\"\nrhs = \"n\"\n",
					filepath.Join(dir, "ent"), filepath.Join(dir, "edges"), p)
				cfg, err := config.Parse([]byte(doc), "toml")
				if err != nil {
					t.Fatal(err)
				}
				o := DefaultOptions()
				o.Delimiter = c.delim
				o.noSync = true // fsync of 256 files dominates; atomicity is tested elsewhere
				if c.rel {
					o.RelCol = 1
				} else {
					o.RhsCol = 1
				}
				rep, err := Import(context.Background(), cfg, o, []string{path})
				if err != nil {
					t.Fatal(err)
				}
				es := rep.EdgeSets[0]
				if es.Edges != c.edges || es.Skipped != 0 || es.EdgeLines != c.edges {
					t.Fatalf("%d edges (%d skipped), want %d", es.Edges, es.Skipped, c.edges)
				}
				st, err := edgestore.Open(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				seen := make([]bool, c.edges)
				var e graph.Edges
				for l := 0; l < p; l++ {
					for r := 0; r < p; r++ {
						b := graph.Bucket{Lhs: l, Rhs: r}
						n, err := st.NumEdges(0, b)
						if err != nil {
							t.Fatal(err)
						}
						e.Reset()
						if err := st.ReadEdges(0, b, 0, n, &e); err != nil {
							t.Fatal(err)
						}
						for _, o := range e.Ordinal {
							if o >= uint64(c.edges) || seen[o] {
								t.Fatalf("ordinal %d out of range or repeated", o)
							}
							seen[o] = true
						}
					}
				}
				for o, ok := range seen {
					if !ok {
						t.Fatalf("ordinal %d missing", o)
					}
				}
				if c.file == "kg/fb15k-237/train.txt" && len(rep.Relations) != 237 {
					t.Errorf("FB15k-237 has %d relations, want 237", len(rep.Relations))
				}
				if c.file == "kg/fb15k-237/train.txt" && rep.Entities["n"] != 14505 {
					t.Errorf("FB15k-237 train has %d entities, want 14505", rep.Entities["n"])
				}
			})
		}
	}
}

// FB15k-237's train, valid and test files as three edge sets of one import:
// one entity dictionary, each set with its own exact count.
func TestRealEdgeSets(t *testing.T) {
	var files []string
	for _, f := range []string{"train", "valid", "test"} {
		files = append(files, shared.Need(t, "kg", "fb15k-237", f+".txt"))
	}
	dir := t.TempDir()
	doc := fmt.Sprintf("entity_path = %q\nedge_paths = [%q, %q, %q]\ncheckpoint_path = \"c\"\ndynamic_relations = true\n[entities.n]\nnum_partitions = 4\n[[relations]]\nname = \"edge\"\nlhs = \"n\"\nrhs = \"n\"\n",
		filepath.Join(dir, "ent"), filepath.Join(dir, "train"), filepath.Join(dir, "valid"), filepath.Join(dir, "test"))
	cfg, err := config.Parse([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.RelCol, o.noSync = 1, true
	rep, err := Import(context.Background(), cfg, o, files)
	if err != nil {
		t.Fatal(err)
	}
	st, err := edgestore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for s, want := range []int64{272115, 17535, 20466} {
		if rep.EdgeSets[s].Edges != want || st.TotalEdges(s) != want {
			t.Errorf("edge set %d: %d edges (store %d), want %d", s, rep.EdgeSets[s].Edges, st.TotalEdges(s), want)
		}
	}
	// valid and test hold entities and relations that train has: the
	// dictionaries are shared, so these counts are train's.
	if rep.Entities["n"] != 14541 || len(rep.Relations) != 237 {
		t.Errorf("%d entities, %d relations", rep.Entities["n"], len(rep.Relations))
	}
}
