package serve_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/batchprep/batchprep/cli"
	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// startServer runs a Server on a real loopback socket and returns it, a
// client connected to it, and the metrics registry.
func startServer(t testing.TB, o serve.Options) (*serve.Server, *grpc.ClientConn, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	o.Registerer = reg
	if o.DataDirs == nil {
		o.DataDirs = []string{os.TempDir()} // the tests' corpora are in t.TempDir()
	}
	srv, err := serve.New(o)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); srv.Stop() })
	return srv, conn, reg
}

// writeCorpus writes a CTF corpus of n sequences: sequence i has 1 + i%4
// lines; line j carries dense x = [i, j] and sparse y = {(i+j)%7: i+0.5},
// and every other line a label z, so data can be checked from the ordinal.
func writeCorpus(t *testing.T, n int) string { return writeCorpusBad(t, n, nil) }

// writeCorpusBad is writeCorpus with the sequences for which bad is true
// made unparsable (a letter in x's first sample).
func writeCorpusBad(t *testing.T, n int, bad func(i int) bool) string {
	t.Helper()
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		for j := 0; j < 1+i%4; j++ {
			x := fmt.Sprint(i)
			if j == 0 && bad != nil && bad(i) {
				x = "q"
			}
			fmt.Fprintf(&b, "%d |x %s %d |y %d:%g", 100+i, x, j, (i+j)%7, float64(i)+0.5)
			if j%2 == 0 {
				b.WriteString(" |z 1")
			}
			b.WriteByte('\n')
		}
	}
	p := filepath.Join(t.TempDir(), "corpus.ctf")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var corpusStreams = []string{"x:2", "y:7:sparse", "z:1"}

// readLine is one line of `batchprep read --format jsonl`.
type readLine struct {
	Step       uint64         `json:"step"`
	Epoch      int            `json:"epoch"`
	Sweep      uint64         `json:"sweep"`
	Start      uint64         `json:"start"`
	End        uint64         `json:"end"`
	EndOfSweep bool           `json:"end_of_sweep"`
	EndOfEpoch bool           `json:"end_of_epoch"`
	Sequences  []int64        `json:"sequences"`
	IDs        []string       `json:"ids"`
	Samples    map[string]int `json:"samples"`
}

// runRead runs the real `batchprep read` and parses its JSON lines.
func runRead(t *testing.T, args ...string) []readLine {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := cli.Main(append([]string{"read", "--quiet", "--format", "jsonl"}, args...), nil, &out, &errOut); code != 0 {
		t.Fatalf("read %v: exit %d: %s", args, code, errOut.String())
	}
	var lines []readLine
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l == "" {
			continue
		}
		var r readLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, r)
	}
	return lines
}

// collect reads a whole Sequences stream.
func collect(t *testing.T, conn *grpc.ClientConn, req *pb.SequenceRequest) []*pb.SequenceMinibatch {
	t.Helper()
	msgs, err := collectErr(context.Background(), conn, req)
	if err != nil {
		t.Fatalf("Sequences(%v): %v", req, err)
	}
	return msgs
}

func collectErr(ctx context.Context, conn *grpc.ClientConn, req *pb.SequenceRequest) ([]*pb.SequenceMinibatch, error) {
	st, err := pb.NewBatchesClient(conn).Sequences(ctx, req)
	if err != nil {
		return nil, err
	}
	var msgs []*pb.SequenceMinibatch
	for {
		m, err := st.Recv()
		if err == io.EOF {
			return msgs, nil
		}
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, m)
	}
}

func int64s(b []byte) []int64 {
	v := make([]int64, len(b)/8)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}

func int32s(b []byte) []int32 {
	v := make([]int32, len(b)/4)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func float32s(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func itoa(n int) string { return fmt.Sprint(n) }

// runningCalls starts n Sequences calls of req under ctx, each past its
// first message (so each holds a slot), and returns their cancel functions
// (also called when the test ends).
func runningCalls(t *testing.T, ctx context.Context, client pb.BatchesClient, req *pb.SequenceRequest, n int) []context.CancelFunc {
	t.Helper()
	var cancels []context.CancelFunc
	for i := range n {
		cctx, cancel := context.WithCancel(ctx)
		t.Cleanup(cancel)
		cancels = append(cancels, cancel)
		st, err := client.Sequences(cctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Recv(); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	return cancels
}
