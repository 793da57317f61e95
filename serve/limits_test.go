package serve_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// TestMinibatchLimits: invariant 11. A request asking more samples per
// minibatch than the server allows, or whose dense rows alone pass its byte
// limit, is refused before anything is read, and a minibatch that encodes
// past the byte limit ends the call; each message states the limit. (Before
// the limits, mb 10^12 with an endless epoch grew the server by gigabytes.)
func TestMinibatchLimits(t *testing.T) {
	file := writeCorpus(t, 12)
	_, conn, _ := startServer(t, serve.Options{})
	_, small, _ := startServer(t, serve.Options{MaxMinibatchSamples: 100, MaxMinibatchBytes: 1000})
	req := func(edit func(r *pb.SequenceRequest)) *pb.SequenceRequest {
		r := &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, EpochSize: "inf", MaxMinibatches: 2}
		edit(r)
		return r
	}
	for _, c := range []struct {
		name  string
		small bool
		req   *pb.SequenceRequest
		code  codes.Code
		want  string
	}{
		{"mb 10^12", false, req(func(r *pb.SequenceRequest) { r.Mb = "1000000000000" }), codes.InvalidArgument, "mb 1000000000000: more samples per minibatch than this server's limit of 1048576"},
		{"a schedule's largest size", false, req(func(r *pb.SequenceRequest) { r.Mb = "8*2:5000000" }), codes.InvalidArgument, "mb 5000000: more samples"},
		{"k", false, req(func(r *pb.SequenceRequest) { r.K = 5000000 }), codes.InvalidArgument, "k 5000000: more samples"},
		{"the server's own sample limit", true, req(func(r *pb.SequenceRequest) { r.Mb = "101" }), codes.InvalidArgument, "limit of 100 (serve --max-minibatch-samples)"},
		{"dense rows past the byte limit", true, req(func(r *pb.SequenceRequest) { r.Mb = "100"; r.Streams = []string{"x:2", "v:3"} }), codes.InvalidArgument, "take 2000 bytes, more than this server's limit of 1000 bytes"},
		{"an encoded minibatch past the byte limit", true, req(func(r *pb.SequenceRequest) { r.Mb = "60" }), codes.ResourceExhausted, "limit of 1000 bytes (serve --max-minibatch-bytes)"},
	} {
		for _, groups := range []bool{false, true} {
			cc := conn
			if c.small {
				cc = small
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			var err error
			if groups {
				var st pb.Batches_SequenceGroupsClient
				if st, err = pb.NewBatchesClient(cc).SequenceGroups(ctx, c.req); err == nil {
					for err == nil {
						_, err = st.Recv()
					}
				}
			} else {
				_, err = collectErr(ctx, cc, c.req)
			}
			cancel()
			s, _ := status.FromError(err)
			if s.Code() != c.code || !strings.Contains(s.Message(), c.want) {
				t.Errorf("%s (groups %v): %v, want %v with %q", c.name, groups, err, c.code, c.want)
			}
		}
	}
	// Within the limits the small server serves.
	if msgs := collect(t, small, req(func(r *pb.SequenceRequest) { r.Mb = "3" })); len(msgs) != 2 {
		t.Errorf("mb 3 under the small limits: %d minibatches, want 2", len(msgs))
	}
}

// TestCancelStopsLargeMinibatches: a client that cancels a stream of the
// largest minibatches allowed frees its call (gauge and reader) promptly.
// One second is the figure on an idle machine; the test allows five.
func TestCancelStopsLargeMinibatches(t *testing.T) {
	file := writeCorpus(t, 40)
	srv, conn, reg := startServer(t, serve.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := pb.NewBatchesClient(conn).Sequences(ctx, &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams,
		Mb: "262144", EpochSize: "inf"}, grpc.MaxCallRecvMsgSize(1<<30))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	cancel()
	t0 := time.Now()
	for {
		_, inUse := srv.OpenReadersForTest()
		if inUse == 0 && gauge(t, reg, "batchprep_serve_clients") == 0 {
			break
		}
		if time.Since(t0) > 5*time.Second {
			t.Fatalf("5 s after the cancel the call still runs (%d readers in use)", inUse)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("the call ended %v after the cancel", time.Since(t0))
}

// TestGraphRecordLimits: invariant 11 for graph calls. A config whose
// batch_size makes batch records past the byte limit is refused before
// anything is read, and a record whose arrays would pass it (weights the
// first check cannot know of) ends the call before they are allocated;
// each message states the limit. (Before, batch_size up to 2^24 was served
// whatever --max-minibatch-bytes said.)
func TestGraphRecordLimits(t *testing.T) {
	cfg := graphFixture(t) // batch_size 5, weighted: 24 bytes per edge
	for _, c := range []struct {
		limit int64
		code  codes.Code
		want  string
	}{
		{90, codes.InvalidArgument, "batch_size 5: a batch record takes at least 100 bytes (20 per edge), more than this server's limit of 90 bytes (serve --max-minibatch-bytes)"},
		{110, codes.ResourceExhausted, "takes 120 bytes, more than this server's limit of 110 bytes (serve --max-minibatch-bytes)"},
	} {
		_, conn, _ := startServer(t, serve.Options{MaxMinibatchBytes: c.limit})
		recs, err := collectGraph(t, conn, &pb.GraphRequest{Config: cfg, AllWorkers: true})
		s, _ := status.FromError(err)
		if s.Code() != c.code || !strings.Contains(s.Message(), c.want) {
			t.Errorf("limit %d: %v, want %v with %q", c.limit, err, c.code, c.want)
		}
		for _, r := range recs {
			if r.Kind == pb.GraphRecord_BATCH && len(r.Ordinals) == 8*5 {
				t.Errorf("limit %d: a batch of 5 edges was sent", c.limit)
			}
		}
	}
	// Within the limit the server serves the whole plan.
	_, conn, _ := startServer(t, serve.Options{MaxMinibatchBytes: 120})
	if _, err := collectGraph(t, conn, &pb.GraphRequest{Config: cfg, AllWorkers: true}); err != nil {
		t.Errorf("limit 120: %v", err)
	}
}

// TestWindowLimit: invariant 11. A call whose randomization window (the
// chunks its source may hold at once, times the chunk size) passes
// MaxWindowBytes is refused before a minibatch is made, naming the field
// and the limit; the default limit serves the same request. (Before the
// limit, window_chunks and chunk_bytes let one call hold a whole corpus.)
func TestWindowLimit(t *testing.T) {
	file := writeCorpus(t, 300)
	_, conn, _ := startServer(t, serve.Options{})
	_, small, _ := startServer(t, serve.Options{MaxWindowBytes: 4096})
	req := func(edit func(r *pb.SequenceRequest)) *pb.SequenceRequest {
		r := &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, Mb: "8", ChunkBytes: 512, MaxMinibatches: 3}
		edit(r)
		return r
	}
	for _, c := range []struct {
		name string
		req  *pb.SequenceRequest
		want string
	}{
		{"window in chunks", req(func(r *pb.SequenceRequest) { r.WindowChunks = 64 }), "window_chunks: the randomization window holds up to"},
		{"window in samples", req(func(r *pb.SequenceRequest) { r.WindowSamples = 400 }), "window_samples: the randomization window holds up to"},
		{"cntk's order", req(func(r *pb.SequenceRequest) { r.Randomize = "cntk" }), "limit of 4096 bytes (serve --max-window-bytes)"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		msgs, err := collectErr(ctx, small, c.req)
		cancel()
		if s, _ := status.FromError(err); s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), c.want) || len(msgs) != 0 {
			t.Errorf("%s: %d minibatches, %v; want InvalidArgument with %q", c.name, len(msgs), err, c.want)
		}
		if msgs := collect(t, conn, c.req); len(msgs) != 3 {
			t.Errorf("%s under the default limit: %d minibatches, want 3", c.name, len(msgs))
		}
	}
	// A window that fits the small limit is served by it.
	fits := req(func(r *pb.SequenceRequest) { r.Randomize = "none"; r.ChunkBytes = 256 })
	if msgs, err := collectErr(context.Background(), small, fits); err != nil || len(msgs) != 3 {
		t.Errorf("file order in small chunks under a 4096-byte window limit: %d minibatches, %v", len(msgs), err)
	}
}
