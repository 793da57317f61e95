package serve_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// dialAgain opens another connection to conn's server: another client.
func dialAgain(t *testing.T, conn *grpc.ClientConn) *grpc.ClientConn {
	t.Helper()
	c, err := grpc.NewClient(conn.Target(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestStalledClientIsCut: invariant 13. A client that opens a stream and
// takes no message holds the server's only slot until the stall timeout
// ends its call; another client, waiting for the slot, is then served, and
// the stalled client, once it reads, gets what was sent before the cut and
// then DeadlineExceeded naming the timeout. (Before the timeout, the
// stalled call held its slot for ever: the other client waited until its
// own deadline.)
func TestStalledClientIsCut(t *testing.T) {
	file := writeCorpus(t, 400)
	srv, conn, _ := startServer(t, serve.Options{MaxConcurrentCalls: 1, StallTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	endless := &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, Mb: "2000", EpochSize: "inf"}
	stalled, err := pb.NewBatchesClient(conn).Sequences(ctx, endless)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stalled.Header(); err != nil { // the call runs
		t.Fatal(err)
	}

	other := dialAgain(t, conn)
	octx, ocancel := context.WithTimeout(ctx, 10*time.Second)
	defer ocancel()
	msgs, err := collectErr(octx, other, &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, Mb: "64"})
	if err != nil || len(msgs) == 0 {
		t.Fatalf("another client, while one stalls: %d messages, %v", len(msgs), err)
	}
	if n := srv.WaitingCallsForTest(); n != 0 {
		t.Errorf("%d calls wait", n)
	}

	got := 0
	for {
		_, err := stalled.Recv()
		if err == nil {
			got++
			continue
		}
		const want = "the client took no message for 300ms (serve --stall-timeout)"
		if status.Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), want) {
			t.Errorf("the stalled stream ends with %v; want DeadlineExceeded with %q", err, want)
		}
		break
	}
	if got == 0 {
		t.Error("the stalled client got no message")
	}
}

// TestNoStallTimeout: with NoStallTimeout (the Python client's private
// server, whose one client may pause for an evaluation or a checkpoint) a
// client that takes nothing for a while is not cut: after the pause its
// stream goes on.
func TestNoStallTimeout(t *testing.T) {
	file := writeCorpus(t, 400)
	_, conn, _ := startServer(t, serve.Options{StallTimeout: serve.NoStallTimeout})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	endless := &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, Mb: "2000", EpochSize: "inf"}
	stream, err := pb.NewBatchesClient(conn).Sequences(ctx, endless)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // longer than the stalls TestStalledClientIsCut cuts
	for i := range 200 {
		if _, err := stream.Recv(); err != nil {
			t.Fatalf("message %d after a pause: %v", i, err)
		}
	}
}

// TestOnePeerCannotTakeEverySlot: invariant 13. With four slots, one
// client (a loopback connection) runs two calls and its two more wait
// while two slots stay free; another client is served at once, and the
// first client's waiting calls run as its running ones end. (Before the
// bound, the first client's four calls took every slot and the other
// waited until its deadline.)
func TestOnePeerCannotTakeEverySlot(t *testing.T) {
	file := writeCorpus(t, 40)
	srv, conn, _ := startServer(t, serve.Options{MaxConcurrentCalls: 4})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := pb.NewBatchesClient(conn)
	endless := &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, Mb: "4", EpochSize: "inf"}
	cancels := runningCalls(t, ctx, client, endless, 2)
	waiting := make(chan error, 2)
	for range 2 {
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

	octx, ocancel := context.WithTimeout(ctx, 10*time.Second)
	defer ocancel()
	msgs, err := collectErr(octx, dialAgain(t, conn), &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, Mb: "8"})
	if err != nil || len(msgs) == 0 {
		t.Fatalf("another client: %d messages, %v", len(msgs), err)
	}
	select {
	case err := <-waiting:
		t.Fatalf("a call past the client's bound ran (%v)", err)
	default:
	}
	for _, c := range cancels {
		c()
	}
	for range 2 {
		if err := <-waiting; err != nil {
			t.Errorf("a waiting call, once the client's others ended: %v", err)
		}
	}
}
