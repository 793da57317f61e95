package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/bucket"
	"github.com/batchprep/batchprep/graph/coord"
)

// distFixture imports a real edge store: 3 partitions, 2 relations, 2
// epochs, 2 edge chunks, 2 workers, 10% holdout.
func distFixture(t *testing.T, order string) string {
	t.Helper()
	dir := t.TempDir()
	tsv := filepath.Join(dir, "edges.tsv")
	var b strings.Builder
	for i := 0; i < 900; i++ {
		fmt.Fprintf(&b, "n%d\tr%d\tn%d\n", (i*13)%97, i%2, (i*31+7)%89)
	}
	os.WriteFile(tsv, []byte(b.String()), 0o644)
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`entity_path = "%[1]s/ent"
edge_paths = ["%[1]s/edges"]
checkpoint_path = "%[1]s/ckpt"
num_epochs = 2
num_edge_chunks = 2
workers = 2
batch_size = 16
eval_fraction = 0.1
bucket_order = %[2]q
seed = 3

[entities.node]
num_partitions = 3

[[relations]]
name = "r0"
lhs = "node"
rhs = "node"

[[relations]]
name = "r1"
lhs = "node"
rhs = "node"
`, dir, order)), 0o644)
	if code, _, errOut := run(t, "import", "--config", cfg, "--lhs-col", "0", "--rel-col", "1", "--rhs-col", "2", tsv); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	return cfg
}

type distLine struct {
	Kind    string   `json:"kind"`
	Epoch   int      `json:"epoch"`
	EdgeSet int      `json:"edge_set"`
	Chunk   int      `json:"chunk"`
	Bucket  [2]int   `json:"bucket"`
	Holdout []uint64 `json:"holdout"`
	Edges   any      `json:"edges"`
	Rank    *int     `json:"rank"`
	Claim   *int64   `json:"claim"`
}

// blocks splits plan output into bucket blocks (a bucket line and its
// batch lines), keyed by (epoch, set, chunk, lhs, rhs); with strip, the
// rank and claim fields are removed from bucket lines.
func blocks(t *testing.T, out string, strip bool) (map[[5]int]string, []distLine) {
	t.Helper()
	m := map[[5]int]string{}
	var heads []distLine
	var key [5]int
	for _, line := range strings.SplitAfter(out, "\n") {
		if line == "" {
			continue
		}
		var d distLine
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if d.Kind == "bucket" {
			key = [5]int{d.Epoch, d.EdgeSet, d.Chunk, d.Bucket[0], d.Bucket[1]}
			if _, dup := m[key]; dup {
				t.Fatalf("bucket %v twice", key)
			}
			heads = append(heads, d)
			if strip {
				if d.Rank == nil || d.Claim == nil {
					t.Fatalf("bucket line without rank or claim: %s", line)
				}
				i := strings.Index(line, `,"rank":`)
				line = line[:i] + "}\n"
			}
		}
		m[key] += line
	}
	return m, heads
}

// TestPlanDistributedUnion runs W ranks of `plan --etcd` against one real
// etcd (in this process) and checks SPEC B6 over their union: each
// (epoch, set, chunk) has every bucket once, with exactly the lines of the
// single-process plan (so every ordinal once, holdout and batches equal);
// claims are unique; in epoch 0 every bucket after the first shares a
// partition with one granted before it.
func TestPlanDistributedUnion(t *testing.T) {
	srv, err := coord.Serve(coord.ServerOptions{Dir: filepath.Join(t.TempDir(), "etcd"), Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, order := range bucket.Names {
		for _, w := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s-W%d", order, w), func(t *testing.T) {
				cfg := distFixture(t, order)
				code, single, errOut := run(t, "plan", "--config", cfg, "--format", "jsonl", "--quiet")
				if code != 0 {
					t.Fatal(errOut)
				}
				want, _ := blocks(t, single, false)
				outs := make([]string, w)
				var wg sync.WaitGroup
				for r := 0; r < w; r++ {
					wg.Go(func() {
						var o, e bytes.Buffer
						if c := Main([]string{"plan", "--config", cfg, "--etcd", srv.Endpoint(), "--rank", fmt.Sprint(r),
							"--world", fmt.Sprint(w), "--format", "jsonl", "--lease-ttl", "2s"}, // default --run
							strings.NewReader(""), &o, &e); c != 0 {
							t.Errorf("rank %d: exit %d: %s", r, c, e.String())
						}
						outs[r] = o.String()
					})
				}
				wg.Wait()
				got := map[[5]int]string{}
				var heads []distLine
				for r, out := range outs {
					m, h := blocks(t, out, true)
					for k, v := range m {
						if _, dup := got[k]; dup {
							t.Fatalf("bucket %v printed by two ranks", k)
						}
						got[k] = v
					}
					for _, d := range h {
						if *d.Rank != r {
							t.Fatalf("rank %d printed rank %d", r, *d.Rank)
						}
					}
					heads = append(heads, h...)
				}
				if len(got) != len(want) {
					t.Fatalf("%d buckets over ranks, single process %d", len(got), len(want))
				}
				for k, v := range want {
					if got[k] != v {
						t.Fatalf("bucket %v differs from the single-process plan:\n%s\nwant\n%s", k, got[k], v)
					}
				}
				sort.Slice(heads, func(i, j int) bool { return *heads[i].Claim < *heads[j].Claim })
				var first []graph.Bucket
				for i, d := range heads {
					if i > 0 && *d.Claim == *heads[i-1].Claim {
						t.Fatalf("claim %d twice", *d.Claim)
					}
					if d.Epoch != 0 {
						continue
					}
					b := graph.Bucket{Lhs: d.Bucket[0], Rhs: d.Bucket[1]}
					ok := len(first) == 0
					for _, f := range first {
						ok = ok || bucket.Shares(f, b)
					}
					if !ok {
						t.Fatalf("epoch 0: bucket %v granted with no partition granted before", b)
					}
					first = append(first, b)
				}
			})
		}
	}
}

func TestPlanSimulate(t *testing.T) {
	cfg := distFixture(t, "inside_out")
	code, out, errOut := run(t, "plan", "--config", cfg, "--trainers", "2", "--simulate", "--format", "jsonl")
	if code != 0 {
		t.Fatal(errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// 2 epochs x 2 chunks x 9 buckets, then the summary.
	if len(lines) != 37 || !strings.Contains(lines[36], `"kind":"sim_summary"`) {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
	var sum struct {
		Makespan, Busy, Idle float64
	}
	json.Unmarshal([]byte(lines[36]), &sum)
	if sum.Busy != 2*900 || sum.Idle+sum.Busy != 2*sum.Makespan {
		t.Fatalf("summary %+v: busy must be every edge of 2 epochs, idle+busy = 2 x makespan", sum)
	}
	code, text, _ := run(t, "plan", "--config", cfg, "--trainers", "2", "--simulate", "--policy", "pbg", "--format", "text")
	if code != 0 || !strings.Contains(text, "pbg policy") || !strings.Contains(text, "idle:") {
		t.Fatalf("text: %s", text)
	}
}

// Distributed and simulation flags that do not fit are usage errors (exit
// 2) naming the flag; the rank flags are checked as train checks them.
func TestPlanDistributedUsage(t *testing.T) {
	cfg := distFixture(t, "random")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--etcd", "127.0.0.1:1", "--rank", "2", "--world", "2"}, "--rank 2 --world 2"},
		{[]string{"--rank", "1"}, "go with --etcd"},
		{[]string{"--simulate", "--trainers", "2", "--world", "2"}, "go with --etcd"},
		{[]string{"--etcd", "127.0.0.1:1", "--world", "1", "--lease-ttl", "10ms"}, "--lease-ttl"},
		{[]string{"--etcd", "127.0.0.1:1", "--world", "2", "--format", "text"}, "jsonl only"},
		{[]string{"--etcd", "127.0.0.1:1", "--world", "1", "--simulate", "--trainers", "2"}, "do not go together"},
		{[]string{"--simulate", "--trainers", "-1"}, "--trainers -1: must be >= 1"}, // --simulate alone predicts memory and disk (TestPlanSimulateMemory)
		{[]string{"--trainers", "2"}, "--trainers goes with --simulate"},
		{[]string{"--simulate", "--trainers", "2", "--policy", "fifo"}, "--policy \"fifo\""},
		{[]string{"--etcd", "127.0.0.1:1", "--world", "1", "--max-batches", "3"}, "do not apply with --etcd"},
	} {
		code, _, errOut := run(t, append([]string{"plan", "--config", cfg}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

func TestPlanDistributedUnreachable(t *testing.T) {
	cfg := distFixture(t, "random")
	code, _, errOut := run(t, "plan", "--config", cfg, "--etcd", "127.0.0.1:1", "--world", "1", "--etcd-timeout", "500ms")
	if code != 1 || !strings.Contains(errOut, "etcd at 127.0.0.1:1 unreachable for 0.5 s; restart it and rerun the same command") {
		t.Fatalf("exit %d, stderr %q: want 1 and an error naming the endpoint", code, errOut)
	}
}

func TestCoordinatorCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var o, e lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- runCoordinator(&Env{Ctx: ctx, Stdout: &o, Stderr: &e}, []string{"--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--no-fsync"})
	}()
	cfg := distFixture(t, "affinity")
	var endpoint string
	for endpoint == "" {
		select {
		case err := <-done:
			t.Fatalf("coordinator ended: %v", err)
		default:
		}
		time.Sleep(10 * time.Millisecond)
		if s := o.String(); strings.Contains(s, "serving on ") {
			endpoint = strings.Fields(strings.SplitAfter(s, "serving on ")[1])[0]
		}
	}
	code, out, errOut := run(t, "plan", "--config", cfg, "--etcd", endpoint, "--world", "1", "--run", "cmd", "--format", "jsonl")
	if code != 0 || strings.Count(out, `"kind":"bucket"`) != 2*2*9 {
		t.Fatalf("exit %d, %d bucket lines: %s", code, strings.Count(out, `"kind":"bucket"`), errOut)
	}
	cancel()
	// Stopped by its context, the command returns the cancellation (a
	// signal's makes exit 130 / 143, TestSignalsStopServers).
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("coordinator stopped: %v, want context.Canceled", err)
	}
	if code, _, _ := run(t, "coordinator"); code != 2 {
		t.Fatalf("coordinator without --data-dir: exit %d", code)
	}
}

// lockedBuffer is a bytes.Buffer safe for one writer and one reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
