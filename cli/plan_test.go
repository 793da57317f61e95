package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/bucket"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/plan"
)

// planFixture writes a config (2 partitions, 2 relations, 2 workers) and
// makes openPlanStore return an in-memory graph of that shape.
func planFixture(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	body := `entity_path = "` + dir + `/ent"
edge_paths = ["` + dir + `/edges"]
checkpoint_path = "` + dir + `/ckpt"
num_epochs = 2
workers = 2
batch_size = 7
eval_fraction = 0.1
bucket_order = "affinity"
` + extra + `
[entities.node]
num_partitions = 2

[[relations]]
name = "r0"
lhs = "node"
rhs = "node"
`
	if !strings.Contains(extra, "dynamic_relations = true") {
		body += "\n[[relations]]\nname = \"r1\"\nlhs = \"node\"\nrhs = \"node\"\n"
	}
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	m := &plan.MemReader{L: 2, R: 2, Sets: []map[graph.Bucket]*graph.Edges{{}}}
	ord := uint64(0)
	for i := 0; i < 2; i++ {
		for j := 0; j < 2; j++ {
			e := &graph.Edges{}
			for k := 0; k < 30+10*i+j; k++ {
				e.Lhs, e.Rhs = append(e.Lhs, rng.Uint32N(20)), append(e.Rhs, rng.Uint32N(20))
				e.Rel, e.Ordinal = append(e.Rel, rng.Uint32N(2)), append(e.Ordinal, ord)
				ord++
			}
			m.Sets[0][graph.Bucket{Lhs: i, Rhs: j}] = e
		}
	}
	old := openPlanStore
	openPlanStore = func(*config.Config) (graph.Reader, func() error, error) {
		return m, func() error { return nil }, nil
	}
	t.Cleanup(func() { openPlanStore = old })
	return cfg
}

func runPlanArgs(t *testing.T, ctx context.Context, args ...string) (string, string, error) {
	t.Helper()
	var o, e bytes.Buffer
	if ctx == nil {
		ctx = context.Background()
	}
	err := runPlan(&Env{Ctx: ctx, Stdin: strings.NewReader(""), Stdout: &o, Stderr: &e}, append(args, "--quiet"))
	return o.String(), e.String(), err
}

// The JSONL contract of SPEC B4 (the field set check.py checks), and
// coverage: each epoch lists all 145 ordinals once, trained or held out.
func TestPlanJSONL(t *testing.T) {
	for _, order := range []string{"affinity", "buffer"} {
		t.Run(order, func(t *testing.T) { planJSONL(t, "--set", "bucket_order="+order, "--set", "partition_buffer=3") })
	}
}

// bufferSets are the --set flags of the buffer order with a buffer of 3.
var bufferSets = []string{"--set", "bucket_order=buffer", "--set", "partition_buffer=3"}

func planJSONL(t *testing.T, sets ...string) {
	cfg := planFixture(t, "")
	out, _, err := runPlanArgs(t, nil, append([]string{"--config", cfg, "--format", "jsonl"}, sets...)...)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]map[float64]int{}
	for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d not JSON: %q", i+1, l)
		}
		keys := []string{"kind", "epoch", "edge_set", "chunk", "bucket", "index", "edges"}
		if m["kind"] == "bucket" {
			keys = append(keys, "holdout")
		} else {
			keys = append(keys, "worker", "batch", "relation")
			if _, ok := m["relation"].(float64); !ok {
				t.Fatalf("relation %v in non-dynamic mode", m["relation"])
			}
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Fatalf("line %d lacks %q: %s", i+1, k, l)
			}
		}
		ep := int(m["epoch"].(float64))
		if seen[ep] == nil {
			seen[ep] = map[float64]int{}
		}
		list := m["edges"]
		if m["kind"] == "bucket" {
			list = m["holdout"]
		}
		for _, x := range list.([]any) {
			seen[ep][x.(float64)]++
		}
	}
	for ep := 0; ep < 2; ep++ {
		if len(seen[ep]) != 30+31+40+41 {
			t.Fatalf("epoch %d lists %d distinct edges", ep, len(seen[ep]))
		}
		for x, c := range seen[ep] {
			if c != 1 {
				t.Fatalf("epoch %d lists edge %v %d times", ep, x, c)
			}
		}
	}
}

// --max-batches N, --state-out, then --state-in: the pieces put together
// are the uninterrupted output, the interrupted bucket repeated once with
// "resumed":true.
func TestPlanResume(t *testing.T) {
	t.Run("affinity", func(t *testing.T) { planResume(t) })
	t.Run("buffer", func(t *testing.T) { planResume(t, bufferSets...) })
}

func planResume(t *testing.T, sets ...string) {
	cfg := planFixture(t, "")
	full, _, err := runPlanArgs(t, nil, append([]string{"--config", cfg}, sets...)...)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "plan.state")
	for _, n := range []int{1, 2, 5, 13, 40} {
		var got []string
		os.Remove(state)
		for round := 0; ; round++ {
			args := append([]string{"--config", cfg, "--max-batches", itoa(n), "--state-out", state}, sets...)
			if round > 0 {
				args = append(args, "--state-in", state)
			}
			out, _, err := runPlanArgs(t, nil, args...)
			if err != nil {
				t.Fatal(err)
			}
			if out == "" {
				break
			}
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				if strings.HasSuffix(l, `,"resumed":true}`) {
					if want := strings.TrimSuffix(l, `,"resumed":true}`) + "}"; got[lastBucket(got)] != want {
						t.Fatalf("n=%d: resumed bucket line %q, original %q", n, l, got[lastBucket(got)])
					}
					continue
				}
				got = append(got, l)
			}
			if round > 1000 {
				t.Fatal("no progress")
			}
		}
		if strings.Join(got, "\n") != strings.TrimSpace(full) {
			t.Fatalf("n=%d: resumed pieces differ from the uninterrupted plan", n)
		}
	}
}

func lastBucket(lines []string) int {
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], `{"kind":"bucket"`) {
			return i
		}
	}
	return -1
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestPlanStateMismatch(t *testing.T) {
	cfg := planFixture(t, "")
	state := filepath.Join(t.TempDir(), "s")
	if _, _, err := runPlanArgs(t, nil, "--config", cfg, "--max-batches", "3", "--state-out", state); err != nil {
		t.Fatal(err)
	}
	cfg2 := planFixture(t, "seed = 5\n")
	_, _, err := runPlanArgs(t, nil, "--config", cfg2, "--state-in", state)
	if err == nil || !strings.Contains(err.Error(), "seed: state 0, plan 5") || !strings.Contains(err.Error(), state) {
		t.Fatalf("mismatch: %v", err)
	}
	os.WriteFile(state, []byte(`{"version":1`), 0o644)
	if _, _, err := runPlanArgs(t, nil, "--config", cfg, "--state-in", state); !errors.Is(err, plan.ErrState) {
		t.Fatalf("truncated state: %v", err)
	}
}

func TestPlanDynamicAndFormats(t *testing.T) {
	cfg := planFixture(t, "dynamic_relations = true\n")
	out, _, err := runPlanArgs(t, nil, "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"relation":null`) || strings.Contains(out, `"relation":0`) {
		t.Fatalf("dynamic mode: relations not null: %.300s", out)
	}
	cfg = planFixture(t, "")
	out, _, err = runPlanArgs(t, nil, "--config", cfg, "--format", "summary")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"buckets: 8\n", "batches: ", "edges: 284 (trained ", "partition loads: ", "seconds: ", "edges/s: "} {
		if !strings.Contains(out, k) {
			t.Fatalf("summary lacks %q:\n%s", k, out)
		}
	}
	out, _, err = runPlanArgs(t, nil, "--config", cfg, "--format", "text")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "partition loads: ") != 2 || !strings.Contains(out, "lhs") || !strings.Contains(out, "affinity order, 4 of 4 buckets") {
		t.Fatalf("text output:\n%s", out)
	}
}

func TestPlanUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"--config", "x", "--format", "xml"}, {"--config", "x", "extra"}, {"--config", "x", "--max-batches", "-1"}} {
		_, _, err := runPlanArgs(t, nil, args...)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// Ctrl-C: the run stops after the current batch and still writes the state.
func TestPlanInterrupt(t *testing.T) {
	cfg := planFixture(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	state := filepath.Join(t.TempDir(), "s")
	out, _, err := runPlanArgs(t, ctx, "--config", cfg, "--state-out", state)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if n := strings.Count(out, `"kind":"batch"`); n != 1 {
		t.Fatalf("%d batches after an interrupt, want 1", n)
	}
	st, err := plan.ReadStateFile(state)
	if err != nil || (st.Position.Worker == 0 && st.Position.Batch == 0 && st.Position.Index == 0) {
		t.Fatalf("state after interrupt: %+v %v", st, err)
	}
}

// summary's partition loads are the sum over passes of bucket.Loads of the
// pass's order (each pass counting its first bucket's loads).
func TestPlanSummaryLoads(t *testing.T) {
	cfgPath := planFixture(t, "")
	out, _, err := runPlanArgs(t, nil, "--config", cfgPath, "--format", "summary")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	r, _, _ := openPlanStore(cfg)
	p, err := plan.New(r, plan.OptionsFromConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for ep := 0; ep < cfg.NumEpochs; ep++ {
		want += bucket.Loads(p.Order(ep, 0, 0))
	}
	if !strings.Contains(out, "partition loads: "+itoa(want)+" ") {
		t.Fatalf("summary does not report %d partition loads:\n%s", want, out)
	}
}
