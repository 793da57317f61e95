package train_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/gen"
	"github.com/batchprep/batchprep/graph/importer"
)

// The setup the scale and quality benchmarks share
// (BenchmarkTrainScaleIO, BenchmarkTrainScaleMemory,
// BenchmarkQualityPartitioned): their environment, their config, their
// generated graph and the batchprep binary they import and train with.

// benchConfig is a benchmark's config: the FB15k-237 comparison settings
// (examples/fb15k237-complex.toml) at dimension 100 with 2 workers and no
// holdout, on one relation r0 (ComplEx) of one entity type, with its
// store, edge sets and checkpoint under dir.
type benchConfig struct {
	dir    string
	sets   []string // edge set directories under dir
	roles  []string // their edge_roles; nil: none
	typ    string   // the entity type
	parts  int      // its partitions
	epochs int
	negs   int // uniform negatives
}

// text is c as TOML.
func (c benchConfig) text() string {
	var sets, roles []string
	for _, s := range c.sets {
		sets = append(sets, strconv.Quote(filepath.Join(c.dir, s)))
	}
	for _, r := range c.roles {
		roles = append(roles, strconv.Quote(r))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "entity_path = %q\nedge_paths = [%s]\n", filepath.Join(c.dir, "entities"), strings.Join(sets, ", "))
	if roles != nil {
		fmt.Fprintf(&sb, "edge_roles = [%s]\n", strings.Join(roles, ", "))
	}
	fmt.Fprintf(&sb, `checkpoint_path = %q
dimension = 100
num_epochs = %d
batch_size = 1000
num_batch_negs = 50
num_uniform_negs = %d
comparator = "dot"
loss_fn = "softmax"
lr = 0.1
regularization_coef = 1e-3
global_emb = false
eval_fraction = 0
workers = 2
bucket_order = "inside_out"
[entities.%s]
num_partitions = %d
[[relations]]
name = "r0"
lhs = %q
rhs = %q
operator = "complex_diagonal"
`, filepath.Join(c.dir, "ckpt"), c.epochs, c.negs, c.typ, c.parts, c.typ, c.typ)
	return sb.String()
}

// scaleConfig is the scale benchmarks' config: one epoch of one edge set,
// "edges", of one entity type, "all", with negs uniform negatives in parts
// partitions, under dir.
func scaleConfig(dir string, negs, parts int) string {
	return benchConfig{dir: dir, sets: []string{"edges"}, typ: "all", parts: parts, epochs: 1, negs: negs}.text()
}

// scaleGraph imports into cfg's store the scale benchmarks' graph
// (writeScaleTSV), written as TSV in dir.
func scaleGraph(b *testing.B, cfg *config.Config, dir string, entities, edges int) error {
	tsv := filepath.Join(dir, "edges.tsv")
	if err := writeScaleTSV(b, tsv, entities, edges); err != nil {
		return err
	}
	opts := importer.DefaultOptions()
	opts.RelCol = 1
	_, err := importer.Import(context.Background(), cfg, opts, []string{tsv})
	return err
}

// writeScaleTSV writes to path the scale benchmarks' graph: graph/gen's
// power-law graph (rank exponent BATCHPREP_SCALE_ZIPF/100, default 80, as
// bench/gengraph's; 0 gives uniform endpoints) of entities entities and
// edges edges, one relation r0, seed 1.
func writeScaleTSV(b *testing.B, path string, entities, edges int) error {
	zipf := 0.8
	if os.Getenv("BATCHPREP_SCALE_ZIPF") != "" {
		zipf = float64(scaleEnvZero(b, "BATCHPREP_SCALE_ZIPF")) / 100
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = gen.WriteTSV(f, gen.Params{Entities: entities, Edges: edges, Relations: 1, Zipf: zipf, Seed: 1})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeHeldOut writes the graph of p as two TSV files: every every-th edge
// to test, the others to train.
func writeHeldOut(p gen.Params, train, test string, every int) error {
	ft, err := os.Create(train)
	if err != nil {
		return err
	}
	defer ft.Close()
	fh, err := os.Create(test)
	if err != nil {
		return err
	}
	defer fh.Close()
	wt, wh := bufio.NewWriter(ft), bufio.NewWriter(fh)
	n := 0
	err = gen.Generate(p, func(lhs, rel, rhs uint32) error {
		w := wt
		if n%every == every-1 {
			w = wh
		}
		n++
		_, err := fmt.Fprintf(w, "e%d\tr%d\te%d\n", lhs, rel, rhs)
		return err
	})
	if err != nil {
		return err
	}
	if err := wt.Flush(); err != nil {
		return err
	}
	if err := wh.Flush(); err != nil {
		return err
	}
	if err := ft.Close(); err != nil {
		return err
	}
	return fh.Close()
}

// buildBatchprep builds the batchprep command into dir and returns its
// path, for benchmarks that run it as a user does.
func buildBatchprep(b *testing.B, dir string) string {
	b.Helper()
	bin := filepath.Join(dir, "batchprep")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/batchprep/batchprep/cmd/batchprep").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// importWithBinary writes text as sub/graph.toml and imports files (the
// relation in column 1) with `bin import`; it returns the config's path.
func importWithBinary(b *testing.B, bin, sub, text string, files ...string) string {
	b.Helper()
	cfgPath := filepath.Join(sub, "graph.toml")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	args := append([]string{"import", "--quiet", "--config", cfgPath, "--rel-col", "1"}, files...)
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		b.Fatalf("import: %v\n%s", err, out)
	}
	return cfgPath
}

// skipUnlessSet skips b, saying why, unless the environment sets name.
func skipUnlessSet(b *testing.B, name, why string) {
	b.Helper()
	if os.Getenv(name) == "" {
		b.Skip(why)
	}
}

// envInt reads a positive integer from the environment, def when unset.
func envInt(b *testing.B, name string, def int) int {
	b.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// envCounts reads a comma-separated list of partition counts from the
// environment, def when unset.
func envCounts(b *testing.B, name string, def []int) []int {
	b.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	var counts []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("%s=%q: want a list of counts >= 1", name, s)
		}
		counts = append(counts, n)
	}
	return counts
}

// scaleEnvZero reads a non-negative integer from the environment.
func scaleEnvZero(b *testing.B, name string) int {
	b.Helper()
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil || n < 0 {
		b.Fatalf("%s=%q: want an integer >= 0", name, os.Getenv(name))
	}
	return n
}
