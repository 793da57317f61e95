package serve_test

import (
	"context"
	"strings"
	"testing"
	"time"

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
	srv, conn, _ := startServer(t, serve.Options{MaxConcurrentCalls: 2})
	client := pb.NewBatchesClient(conn)
	endless := &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, Mb: "4", EpochSize: "inf"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var cancels []context.CancelFunc
	for i := 0; i < 2; i++ {
		cctx, ccancel := context.WithCancel(ctx)
		defer ccancel()
		cancels = append(cancels, ccancel)
		st, err := client.Sequences(cctx, endless)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Recv(); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
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
	const want = "the server runs 2 calls, its limit (serve --max-concurrent-calls), and 2 more wait"
	if _, err := collectErr(ctx, conn, endless); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), want) {
		t.Errorf("a fifth sequence call: %v, want ResourceExhausted with %q", err, want)
	}
	if _, err := collectGraph(t, conn, &pb.GraphRequest{Config: cfg, AllWorkers: true}); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), want) {
		t.Errorf("a fifth graph call: %v, want ResourceExhausted with %q", err, want)
	}
	// A running call ends: a waiting one gets its slot.
	cancels[0]()
	if err := <-waiting; err != nil {
		t.Errorf("the waiting call, once a slot was free: %v", err)
	}
}
