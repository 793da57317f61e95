package serve_test

import (
	"context"
	"fmt"
	dto "github.com/prometheus/client_model/go"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// contractCase is one set of choices, as read's flags and as a request.
type contractCase struct {
	name string
	args []string
	req  *pb.SequenceRequest
}

func contractCases(file string) []contractCase {
	u := func(v uint64) *uint64 { return &v }
	base := func(r *pb.SequenceRequest) *pb.SequenceRequest {
		r.Files, r.Streams = []string{file}, corpusStreams
		return r
	}
	return []contractCase{
		{"defaults", nil, base(&pb.SequenceRequest{})},
		{"window small", []string{"--mb", "9", "--chunk-sequences", "5", "--window-chunks", "3", "--seed", "7", "--epochs", "3"},
			base(&pb.SequenceRequest{Mb: "9", ChunkSequences: 5, WindowChunks: 3, Seed: 7, Epochs: 3})},
		{"cntk schedule", []string{"--randomize", "cntk", "--mb", "4*2:16", "--chunk-sequences", "4", "--epochs", "4", "--window-samples", "40"},
			base(&pb.SequenceRequest{Randomize: "cntk", Mb: "4*2:16", ChunkSequences: 4, Epochs: 4, WindowSamples: 40})},
		{"none rank 1 of 3 cut", []string{"--randomize", "none", "--mb", "10", "--workers", "3", "--rank", "1", "--cut-at-sweep", "--epoch-size", "inf", "--max-minibatches", "40"},
			base(&pb.SequenceRequest{Randomize: "none", Mb: "10", Workers: 3, Rank: 1, CutAtSweep: true, EpochSize: "inf", MaxMinibatches: 40})},
		{"label epochs start", []string{"--label", "z", "--epoch-size", "30", "--epochs", "5", "--mb", "12", "--start", "77", "--chunk-bytes", "300"},
			base(&pb.SequenceRequest{Label: "z", EpochSize: "30", Epochs: 5, Mb: "12", Start: u(77), ChunkBytes: 300})},
		{"defines mb size", []string{"--defines-mb-size", "z", "--mb", "5", "--chunk-sequences", "7", "--seed", "3"},
			base(&pb.SequenceRequest{DefinesMbSize: "z", Mb: "5", ChunkSequences: 7, Seed: 3})},
	}
}

// TestContract: invariant 1, against the real `batchprep read`.
func TestContract(t *testing.T) {
	checkContract(t, writeCorpus(t, 53))
}

// checkContract runs every case of contractCases on file (writeCorpus's
// corpus, as CTF or converted) through the server and through the real
// `batchprep read`, and checks that the two agree and that the data is the
// corpus's.
func checkContract(t *testing.T, file string) {
	t.Helper()
	_, conn, _ := startServer(t, serve.Options{})
	for _, c := range contractCases(file) {
		t.Run(c.name, func(t *testing.T) {
			want := runRead(t, append([]string{file, "--stream", "x:2", "--stream", "y:7:sparse", "--stream", "z:1"}, c.args...)...)
			got := collect(t, conn, c.req)
			if len(got) != len(want) || len(want) == 0 {
				t.Fatalf("%d messages, read printed %d lines", len(got), len(want))
			}
			for i, m := range got {
				checkAgainstRead(t, i, m, want[i])
				checkData(t, i, m, c.req.DefinesMbSize != "")
			}
		})
	}
}

func checkAgainstRead(t *testing.T, i int, m *pb.SequenceMinibatch, w readLine) {
	t.Helper()
	seqs := int64s(m.Sequences)
	if len(seqs) == 0 {
		seqs = []int64{}
	}
	if w.Sequences == nil {
		w.Sequences = []int64{}
	}
	ids := m.Ids
	if ids == nil {
		ids = []string{}
	}
	if w.IDs == nil {
		w.IDs = []string{}
	}
	samples := map[string]int{}
	for _, s := range m.Streams {
		n := 0
		for _, l := range int32s(s.Lengths) {
			n += int(l)
		}
		samples[s.Name] = n
	}
	got := readLine{m.Step, int(m.Epoch), m.Sweep, m.Start, m.End, m.EndOfSweep, m.EndOfEpoch, seqs, ids, samples}
	if !reflect.DeepEqual(got, w) {
		t.Fatalf("message %d:\n got %+v\nwant %+v", i, got, w)
	}
}

// checkData checks every array against the corpus's construction
// (writeCorpus): dense rows, CSR offsets, indices, values and lengths.
func checkData(t *testing.T, k int, m *pb.SequenceMinibatch, zDefines bool) {
	t.Helper()
	seqs := int64s(m.Sequences)
	x, y := m.Streams[0], m.Streams[1]
	xl, yl := int32s(x.Lengths), int32s(y.Lengths)
	dense := float32s(x.Dense)
	indptr, ind, val := int32s(y.Indptr), int32s(y.Indices), float32s(y.Values)
	if len(xl) != len(seqs) || len(yl) != len(seqs) || len(indptr) != len(ind)+1 || len(ind) != len(val) {
		t.Fatalf("message %d: %d sequences, lengths %d %d, indptr %d, indices %d, values %d", k, len(seqs), len(xl), len(yl), len(indptr), len(ind), len(val))
	}
	row := 0
	for s, i := range seqs {
		n := int(1 + i%4)
		if xl[s] != int32(n) || yl[s] != int32(n) {
			t.Fatalf("message %d: sequence %d lengths %d %d, want %d", k, i, xl[s], yl[s], n)
		}
		for j := 0; j < n; j, row = j+1, row+1 {
			if dense[2*row] != float32(i) || dense[2*row+1] != float32(j) {
				t.Fatalf("message %d: sequence %d sample %d dense %v", k, i, j, dense[2*row:2*row+2])
			}
			if indptr[row+1]-indptr[row] != 1 || ind[indptr[row]] != int32((int(i)+j)%7) || val[indptr[row]] != float32(i)+0.5 {
				t.Fatalf("message %d: sequence %d sample %d sparse wrong", k, i, j)
			}
		}
		if m.Ids[s] != strconv.Itoa(100+int(i)) {
			t.Fatalf("message %d: id %q for ordinal %d", k, m.Ids[s], i)
		}
	}
	if 2*row != len(dense) {
		t.Fatalf("message %d: %d dense values for %d rows", k, len(dense), row)
	}
}

// TestResumeEveryState: invariant 2; resuming after each message gives the
// rest of the uninterrupted stream.
func TestResumeEveryState(t *testing.T) {
	file := writeCorpus(t, 41)
	_, conn, _ := startServer(t, serve.Options{})
	req := &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, Mb: "7", ChunkSequences: 4, WindowChunks: 2, Seed: 5, Epochs: 2}
	all := collect(t, conn, req)
	for i, m := range all {
		r := proto.Clone(req).(*pb.SequenceRequest)
		r.State = m.State
		rest := collect(t, conn, r)
		if len(rest) != len(all)-i-1 {
			t.Fatalf("after message %d: %d messages, want %d", i, len(rest), len(all)-i-1)
		}
		for j, mm := range rest {
			if !proto.Equal(mm, all[i+1+j]) {
				t.Fatalf("after message %d: message %d differs", i, j)
			}
		}
	}
}

// TestNextK: k gives read's minibatches at a constant size (the
// MinibatchSource path), and one-sample halves concatenate (SPEC A3.2).
func TestNextK(t *testing.T) {
	file := writeCorpus(t, 30)
	_, conn, _ := startServer(t, serve.Options{})
	req := &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, Mb: "1*3:200", K: 8, Seed: 2}
	want := runRead(t, file, "--stream", "x:2", "--stream", "y:7:sparse", "--stream", "z:1", "--mb", "8", "--seed", "2")
	got := collect(t, conn, req)
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d", len(got), len(want))
	}
	for i := range got {
		checkAgainstRead(t, i, got[i], want[i])
	}
}

// TestConcurrentClients: invariant 3; parallel calls, one per message or
// grouped, give what each gives alone.
func TestConcurrentClients(t *testing.T) {
	file := writeCorpus(t, 60)
	_, conn, _ := startServer(t, serve.Options{})
	reqs := make([]*pb.SequenceRequest, 6)
	wants := make([][]*pb.SequenceMinibatch, len(reqs))
	for i := range reqs {
		reqs[i] = &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, Mb: strconv.Itoa(5 + i), Seed: uint64(i % 3), ChunkSequences: 6, WindowChunks: 3, Epochs: 3}
		wants[i] = collect(t, conn, reqs[i])
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3*len(reqs))
	for rep := 0; rep < 3; rep++ {
		for i := range reqs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				collect := collectErr
				if (rep+i)%2 == 1 {
					collect = collectGroups
				}
				got, err := collect(context.Background(), conn, reqs[i])
				if err != nil {
					errs <- err
					return
				}
				if len(got) != len(wants[i]) {
					errs <- fmt.Errorf("request %d: %d messages, want %d", i, len(got), len(wants[i]))
					return
				}
				for j := range got {
					if !proto.Equal(got[j], wants[i][j]) {
						errs <- fmt.Errorf("request %d message %d differs", i, j)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestDisconnect: invariant 4; a client that cancels an endless stream
// frees its call: the gauge returns to 0 and no reader stays in use.
func TestDisconnect(t *testing.T) {
	file := writeCorpus(t, 200)
	srv, conn, reg := startServer(t, serve.Options{})
	for c := 0; c < 4; c++ {
		ctx, cancel := context.WithCancel(context.Background())
		req := &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams,
			Mb: "3", EpochSize: "inf", ChunkSequences: 10, WindowChunks: 2}
		var recv func() error
		if c%2 == 0 {
			st, err := pb.NewBatchesClient(conn).Sequences(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			recv = func() error { _, err := st.Recv(); return err }
		} else {
			st, err := pb.NewBatchesClient(conn).SequenceGroups(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			recv = func() error { _, err := st.Recv(); return err }
		}
		for i := 0; i < 5; i++ {
			if err := recv(); err != nil {
				t.Fatal(err)
			}
		}
		if _, inUse := srv.OpenReadersForTest(); inUse != 1 {
			t.Fatalf("client %d: %d readers in use while streaming, want 1", c, inUse)
		}
		cancel()
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, inUse := srv.OpenReadersForTest()
			if inUse == 0 && gauge(t, reg, "batchprep_serve_clients") == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("client %d: after cancel, %d readers in use, clients gauge %v", c, inUse, gauge(t, reg, "batchprep_serve_clients"))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if n, _ := srv.OpenReadersForTest(); n != 1 {
		t.Fatalf("%d cached readers, want the one file's", n)
	}
}

// gauge sums a metric's series.
func gauge(t *testing.T, g interface {
	Gather() ([]*dto.MetricFamily, error)
}, name string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.Metric {
			sum += m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	return sum
}

// TestBadRequests: invariant 5.
func TestBadRequests(t *testing.T) {
	file := writeCorpus(t, 10)
	_, conn, _ := startServer(t, serve.Options{})
	ok := func(edit func(r *pb.SequenceRequest)) *pb.SequenceRequest {
		r := &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams}
		edit(r)
		return r
	}
	other := collect(t, conn, ok(func(r *pb.SequenceRequest) { r.Seed = 9; r.MaxMinibatches = 1 }))[0].State
	cases := []struct {
		req  *pb.SequenceRequest
		code codes.Code
		msg  string
	}{
		{ok(func(r *pb.SequenceRequest) { r.Files = nil }), codes.InvalidArgument, "files: want exactly one"},
		{ok(func(r *pb.SequenceRequest) { r.Files = []string{file + ".missing"} }), codes.NotFound, "files: "},
		{ok(func(r *pb.SequenceRequest) { r.Streams = nil }), codes.InvalidArgument, "at least one stream"},
		{ok(func(r *pb.SequenceRequest) { r.Streams = []string{"x:two"} }), codes.InvalidArgument, "stream x:two"},
		{ok(func(r *pb.SequenceRequest) { r.Mb = "0" }), codes.InvalidArgument, "mb: "},
		{ok(func(r *pb.SequenceRequest) { r.EpochSize = "zero" }), codes.InvalidArgument, "epoch_size: "},
		{ok(func(r *pb.SequenceRequest) { r.Randomize = "shuffle" }), codes.InvalidArgument, `randomize "shuffle"`},
		{ok(func(r *pb.SequenceRequest) { r.WindowChunks, r.WindowSamples = 2, 9 }), codes.InvalidArgument, "window_chunks and window_samples"},
		{ok(func(r *pb.SequenceRequest) { r.Workers, r.Rank = 2, 5 }), codes.InvalidArgument, "rank 5"},
		{ok(func(r *pb.SequenceRequest) { r.Epochs = -1 }), codes.InvalidArgument, "epochs -1"},
		{ok(func(r *pb.SequenceRequest) { r.K = -3 }), codes.InvalidArgument, "k -3"},
		{ok(func(r *pb.SequenceRequest) { r.State = []byte("{") }), codes.InvalidArgument, "state: "},
		{ok(func(r *pb.SequenceRequest) { r.State = other; r.Start = new(uint64) }), codes.InvalidArgument, "start and state"},
		{ok(func(r *pb.SequenceRequest) { r.State = other }), codes.FailedPrecondition, "state: "},
	}
	for _, c := range cases {
		_, err := collectErr(context.Background(), conn, c.req)
		s, _ := status.FromError(err)
		if s.Code() != c.code || !contains(s.Message(), c.msg) {
			t.Errorf("%v: %v, want %v with %q", c.req, err, c.code, c.msg)
		}
		got, err := collectGroups(context.Background(), conn, c.req)
		if s, _ := status.FromError(err); len(got) != 0 || s.Code() != c.code || !contains(s.Message(), c.msg) {
			t.Errorf("groups %v: %d minibatches, %v, want %v with %q", c.req, len(got), err, c.code, c.msg)
		}
	}
	for _, n := range []int32{-1, 64<<20 + 1} {
		_, err := collectGroups(context.Background(), conn, ok(func(r *pb.SequenceRequest) { r.GroupBytes = n }))
		if s, _ := status.FromError(err); s.Code() != codes.InvalidArgument || !contains(s.Message(), fmt.Sprintf("group_bytes %d: ", n)) {
			t.Errorf("group_bytes %d: %v", n, err)
		}
	}
}

// Each call has its own max_errors budget (a ctf.Session on the shared
// index): two calls on one file, each meeting two bad sequences with a
// budget of two, both deliver what `batchprep read` does for the same
// choices. With one budget for the file the second call ended with
// DataLoss after the first call's two. Calls with another budget share the
// index too: one reader serves them all.
func TestCallsHaveTheirOwnBudget(t *testing.T) {
	file := writeCorpusBad(t, 53, func(i int) bool { return i%10 == 5 })
	srv, conn, _ := startServer(t, serve.Options{})
	u := func(v uint64) *uint64 { return &v }
	for _, c := range []struct{ start, maxErrors int }{{0, 2}, {60, 2}, {0, 2}, {60, 5}} {
		args := []string{file, "--stream", "x:2", "--stream", "y:7:sparse", "--stream", "z:1", "--randomize", "none",
			"--mb", "10", "--chunk-sequences", "5", "--max-errors", itoa(c.maxErrors), "--max-minibatches", "5", "--start", itoa(c.start)}
		want := runRead(t, args...)
		got := collect(t, conn, &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, Randomize: "none",
			Mb: "10", ChunkSequences: 5, MaxErrors: int32(c.maxErrors), MaxMinibatches: 5, Start: u(uint64(c.start))})
		if len(got) != len(want) || len(want) != 5 {
			t.Fatalf("%+v: %d messages, read printed %d lines (want 5)", c, len(got), len(want))
		}
		skipped := 0
		for i, m := range got {
			checkAgainstRead(t, i, m, want[i])
			skipped += len(m.Skipped)
		}
		if skipped != 2 {
			t.Fatalf("%+v: %d bad sequences skipped, want 2 (the test needs the budget spent)", c, skipped)
		}
	}
	if n, _ := srv.OpenReadersForTest(); n != 1 {
		t.Errorf("%d readers open for one file and two budgets, want 1", n)
	}
}
