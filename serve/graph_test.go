package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/batchprep/batchprep/cli"
	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// graphFixture imports a small weighted graph with the real `batchprep
// import` and returns its config path.
func graphFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "graph.toml")
	body := fmt.Sprintf(`entity_path = %q
edge_paths = [%q]
checkpoint_path = %q
num_epochs = 2
workers = 3
batch_size = 5
eval_fraction = 0.1
num_edge_chunks = 2
bucket_order = "affinity"
seed = 4

[entities.node]
num_partitions = 2

[[relations]]
name = "a"
lhs = "node"
rhs = "node"

[[relations]]
name = "b"
lhs = "node"
rhs = "node"
`, dir+"/ent", dir+"/edges", dir+"/ckpt")
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var tsv strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&tsv, "n%d\t%s\tn%d\t%d.5\n", (i*7)%41, []string{"a", "b"}[i%2], (i*13+5)%37, i%3)
	}
	edges := filepath.Join(dir, "edges.tsv")
	if err := os.WriteFile(edges, []byte(tsv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := cli.Main([]string{"import", "--config", cfg, "--rel-col", "1", "--rhs-col", "2", "--weight-col", "3", edges}, nil, &out, &errOut); code != 0 {
		t.Fatalf("import: %s", errOut.String())
	}
	return cfg
}

// planLine is a line of `batchprep plan --format jsonl`.
type planLine struct {
	Kind     string  `json:"kind"`
	Epoch    int     `json:"epoch"`
	EdgeSet  int     `json:"edge_set"`
	Chunk    int     `json:"chunk"`
	Bucket   [2]int  `json:"bucket"`
	Index    int     `json:"index"`
	Edges    any     `json:"edges"`
	Holdout  []int64 `json:"holdout"`
	Worker   int     `json:"worker"`
	Batch    int     `json:"batch"`
	Relation *int    `json:"relation"`
	Resumed  bool    `json:"resumed"`
}

func runPlan(t *testing.T, cfg string) []planLine {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := cli.Main([]string{"plan", "--quiet", "--config", cfg, "--format", "jsonl"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("plan: %s", errOut.String())
	}
	var lines []planLine
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var p planLine
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, p)
	}
	return lines
}

func collectGraph(t *testing.T, conn *grpc.ClientConn, req *pb.GraphRequest) ([]*pb.GraphRecord, error) {
	t.Helper()
	st, err := pb.NewBatchesClient(conn).Graph(context.Background(), req)
	if err != nil {
		return nil, err
	}
	var recs []*pb.GraphRecord
	for {
		m, err := st.Recv()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
		recs = append(recs, m)
	}
}

// asPlanLine converts a record to the plan's JSON shape.
func asPlanLine(m *pb.GraphRecord) planLine {
	p := planLine{Epoch: int(m.Epoch), EdgeSet: int(m.EdgeSet), Chunk: int(m.Chunk), Bucket: [2]int{int(m.BucketLhs), int(m.BucketRhs)}, Index: int(m.Index)}
	if m.Kind == pb.GraphRecord_BUCKET {
		p.Kind, p.Edges, p.Holdout, p.Resumed = "bucket", float64(m.Edges), int64s(m.Holdout), m.Resumed
		if len(p.Holdout) == 0 {
			p.Holdout = []int64{}
		}
		return p
	}
	p.Kind, p.Worker, p.Batch = "batch", int(m.Worker), int(m.Batch)
	if m.Relation >= 0 {
		r := int(m.Relation)
		p.Relation = &r
	}
	var e []any
	for _, o := range int64s(m.Ordinals) {
		e = append(e, float64(o))
	}
	p.Edges = e
	return p
}

// TestGraphContract: invariant 7, against the real `batchprep plan`: all
// workers give the plan's lines; one worker gives its batch lines and
// every bucket line; the edge columns agree with the ordinals' relations
// and weights; resuming from a state gives the rest.
func TestGraphContract(t *testing.T) {
	cfg := graphFixture(t)
	_, conn, _ := startServer(t, serve.Options{})
	want := runPlan(t, cfg)
	all, err := collectGraph(t, conn, &pb.GraphRequest{Config: cfg, AllWorkers: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(want) {
		t.Fatalf("%d records, plan printed %d lines", len(all), len(want))
	}
	for i, m := range all {
		if got := asPlanLine(m); !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("record %d:\n got %+v\nwant %+v", i, got, want[i])
		}
		if m.Kind == pb.GraphRecord_BATCH {
			n := len(m.Ordinals) / 8
			rel, w, ords := int32s(m.Rel), float32s(m.Weight), int64s(m.Ordinals)
			if len(m.Lhs) != 4*n || len(m.Rhs) != 4*n || len(rel) != n || len(w) != n {
				t.Fatalf("record %d: column lengths differ", i)
			}
			for j, o := range ords {
				if rel[j] != int32(o%2) || rel[j] != m.Relation || w[j] != float32(o%3)+0.5 {
					t.Fatalf("record %d edge %d: relation %d weight %v for ordinal %d", i, j, rel[j], w[j], o)
				}
			}
		}
	}
	one, err := collectGraph(t, conn, &pb.GraphRequest{Config: cfg, Worker: 1})
	if err != nil {
		t.Fatal(err)
	}
	var filtered []planLine
	for _, l := range want {
		if l.Kind == "bucket" || l.Worker == 1 {
			filtered = append(filtered, l)
		}
	}
	if len(one) != len(filtered) {
		t.Fatalf("worker 1: %d records, want %d", len(one), len(filtered))
	}
	for i, m := range one {
		if got := asPlanLine(m); !reflect.DeepEqual(got, filtered[i]) {
			t.Fatalf("worker 1 record %d differs", i)
		}
	}
	for _, i := range []int{3, len(all) / 2, len(all) - 2} {
		for all[i].Kind != pb.GraphRecord_BATCH {
			i++ // after a bucket record, the plan announces that bucket again
		}
		rest, err := collectGraph(t, conn, &pb.GraphRequest{Config: cfg, AllWorkers: true, State: all[i].State})
		if err != nil {
			t.Fatal(err)
		}
		var tail []*pb.GraphRecord
		for _, m := range rest {
			if !m.Resumed {
				tail = append(tail, m)
			}
		}
		if len(tail) != len(all)-i-1 {
			t.Fatalf("resume after %d (%v): %d records (without the resumed bucket), want %d; first %v", i, all[i].Kind, len(tail), len(all)-i-1, asPlanLine(rest[0]))
		}
		for j := range tail {
			if !reflect.DeepEqual(asPlanLine(tail[j]), asPlanLine(all[i+1+j])) {
				t.Fatalf("resume after %d: record %d differs", i, j)
			}
		}
	}
}

func TestGraphBadRequests(t *testing.T) {
	cfg := graphFixture(t)
	_, conn, _ := startServer(t, serve.Options{})
	// A Python config is refused by its name, never run (its code would
	// run on the server's host); the file here would create marker.
	dir := filepath.Dir(cfg)
	py := filepath.Join(dir, "pbg.py")
	marker := filepath.Join(dir, "ran")
	code := fmt.Sprintf("open(%q, 'w').close()\ndef get_torchbiggraph_config():\n    return {}\n", marker)
	if err := os.WriteFile(py, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("the server ran the Python config")
		}
	}()
	cases := []struct {
		req  *pb.GraphRequest
		code codes.Code
		msg  string
	}{
		{&pb.GraphRequest{}, codes.InvalidArgument, "config: "},
		{&pb.GraphRequest{Config: py}, codes.InvalidArgument, "is a Python config; the server does not run Python configs"},
		{&pb.GraphRequest{Config: cfg + ".missing"}, codes.NotFound, "config: "},
		{&pb.GraphRequest{Config: cfg, Worker: 3}, codes.InvalidArgument, "worker 3"},
		{&pb.GraphRequest{Config: cfg, Worker: -1}, codes.InvalidArgument, "worker -1"},
		{&pb.GraphRequest{Config: cfg, MaxBatches: -1}, codes.InvalidArgument, "max_batches -1"},
		{&pb.GraphRequest{Config: cfg, State: []byte("nope")}, codes.InvalidArgument, "state: "},
	}
	for _, c := range cases {
		_, err := collectGraph(t, conn, c.req)
		s, _ := status.FromError(err)
		if s.Code() != c.code || !strings.Contains(s.Message(), c.msg) {
			t.Errorf("%v: %v, want %v with %q", c.req, err, c.code, c.msg)
		}
	}
}
