package serve_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// TestConcurrentCallLimit: invariant 12. With MaxConcurrentCalls 2, two
// endless calls run, a third waits for a slot (and gets one when a running
// call ends), and a call past the queue is refused with ResourceExhausted
// stating the limit, a graph call as a sequence call. (Before the limit,
// every call ran at once, each able to hold the largest minibatch.)
func TestConcurrentCallLimit(t *testing.T) {
	file := writeCorpus(t, 40)
	cfg := graphFixture(t)
	srv, conn, reg := startServer(t, serve.Options{MaxConcurrentCalls: 2, MaxCallsPerPeer: 2})
	client := pb.NewBatchesClient(conn)
	endless := &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, Mb: "4", EpochSize: "inf"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cancels := runningCalls(t, ctx, client, endless, 2)
	// The queue holds as many calls as may run: two wait.
	waiting := make(chan error, 2)
	for i := 0; i < 2; i++ {
		st, err := client.Sequences(ctx, endless)
		if err != nil {
			t.Fatal(err)
		}
		go func() { _, err := st.Recv(); waiting <- err }()
	}
	for srv.WaitingCallsForTest() != 2 {
		if ctx.Err() != nil {
			t.Fatalf("%d calls wait, want 2", srv.WaitingCallsForTest())
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-waiting:
		t.Fatalf("a call past the limit ran (%v)", err)
	default:
	}
	if g := gauge(t, reg, "batchprep_serve_waiting_calls"); g != 2 {
		t.Errorf("batchprep_serve_waiting_calls %v, want 2", g)
	}
	const want = "the server runs 2 calls, its limit (serve --max-concurrent-calls), and 2 more wait"
	if _, err := collectErr(ctx, conn, endless); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), want) {
		t.Errorf("a fifth sequence call: %v, want ResourceExhausted with %q", err, want)
	}
	if _, err := collectGraph(t, conn, &pb.GraphRequest{Config: cfg, AllWorkers: true}); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), want) {
		t.Errorf("a fifth graph call: %v, want ResourceExhausted with %q", err, want)
	}
	if n := refusedCalls(t, reg); n != 2 {
		t.Errorf("batchprep_serve_calls_total counts %v calls refused, want 2", n)
	}
	// A running call ends: a waiting one gets its slot.
	cancels[0]()
	if err := <-waiting; err != nil {
		t.Errorf("the waiting call, once a slot was free: %v", err)
	}
}

// refusedCalls sums batchprep_serve_calls_total{code="ResourceExhausted"}.
func refusedCalls(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "batchprep_serve_calls_total" {
			continue
		}
		for _, m := range mf.Metric {
			for _, l := range m.Label {
				if l.GetName() == "code" && l.GetValue() == "ResourceExhausted" {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}
