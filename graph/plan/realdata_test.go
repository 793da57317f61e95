package plan

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/importer"
	"github.com/batchprep/batchprep/internal/shared"
)

// The plan over a real imported store (the Nations knowledge graph: 1,592
// edges, 55 relations, 4 partitions): every epoch lists each ordinal
// 0..1591 once, trained or held out, and a stop-and-resume in the middle of
// a bucket gives the same rest.
func TestRealStore(t *testing.T) {
	src := shared.Need(t, "kg", "nations", "train.txt")
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	rels := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Split(strings.TrimRight(sc.Text(), "\r"), "\t"); len(fs) == 3 {
			rels[fs[1]] = true
		}
	}
	f.Close()
	names := slices.Sorted(func(yield func(string) bool) {
		for r := range rels {
			if !yield(r) {
				return
			}
		}
	})
	dir := t.TempDir()
	var sb strings.Builder
	fmt.Fprintf(&sb, "entity_path = %q\nedge_paths = [%q]\ncheckpoint_path = %q\n", filepath.Join(dir, "ent"), filepath.Join(dir, "edges"), filepath.Join(dir, "ckpt"))
	sb.WriteString("num_epochs = 2\nworkers = 3\nbatch_size = 20\neval_fraction = 0.05\nbucket_order = \"affinity\"\nnum_edge_chunks = 2\n[entities.country]\nnum_partitions = 4\n")
	for _, r := range names {
		fmt.Fprintf(&sb, "[[relations]]\nname = %q\nlhs = \"country\"\nrhs = \"country\"\n", r)
	}
	cfg, err := config.Parse([]byte(sb.String()), "toml")
	if err != nil {
		t.Fatal(err)
	}
	opts := importer.DefaultOptions()
	opts.RelCol = 1
	st := importStore(t, cfg, opts, src)
	o := Options{NumEpochs: cfg.NumEpochs, NumEdgeChunks: *cfg.NumEdgeChunks, BucketOrder: cfg.BucketOrder,
		Workers: cfg.NumWorkers(), BatchSize: cfg.BatchSize, EvalFraction: cfg.EvalFraction,
		NumRelations: len(cfg.Relations), Seed: cfg.Seed}
	p := mustPlan(t, st, o)
	if !strings.HasPrefix(p.Fingerprint().Store, st.Fingerprint()) {
		t.Fatalf("plan does not record the store fingerprint")
	}
	seen := [2]map[uint64]int{{}, {}}
	for _, e := range walk(t, p) {
		if e.rec.Kind == BatchRecord && len(e.ords) > o.BatchSize {
			t.Fatalf("batch of %d", len(e.ords))
		}
		for _, x := range e.ords {
			seen[e.rec.Epoch][x]++
		}
	}
	for ep, m := range seen {
		if len(m) != 1592 {
			t.Fatalf("epoch %d lists %d distinct ordinals, want 1592", ep, len(m))
		}
		for x, c := range m {
			if x >= 1592 || c != 1 {
				t.Fatalf("epoch %d: ordinal %d listed %d times", ep, x, c)
			}
		}
	}
	full := collect(t, mustIter(t, p, p.Start()), -1)
	it := mustIter(t, p, p.Start())
	head := collect(t, it, 37)
	rest := collect(t, mustIter(t, p, it.State()), -1)
	if strings.HasSuffix(rest[0], " resumed") {
		rest = rest[1:]
	}
	if strings.Join(append(head, rest...), "\n") != strings.Join(full, "\n") {
		t.Fatal("resume over the store differs from the uninterrupted plan")
	}
}
