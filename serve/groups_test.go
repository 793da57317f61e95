package serve_test

import (
	"context"
	"io"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// TestGroups: invariant 8. For every contract case and several group
// sizes, SequenceGroups holds Sequences' minibatches in order, message n
// holds at most 2^n, and a message other than the last is cut exactly when
// its minibatches reach group_bytes.
func TestGroups(t *testing.T) {
	file := writeCorpus(t, 53)
	_, conn, reg := startServer(t, serve.Options{})
	sentBytes := 0
	for _, c := range contractCases(file) {
		want := collect(t, conn, c.req)
		for _, limit := range []int32{0, 1, 200, 700, 5000} {
			req := proto.Clone(c.req).(*pb.SequenceRequest)
			req.GroupBytes = limit
			groups := collectGroupMessages(t, conn, req)
			if limit == 0 {
				limit = 256 << 10
			}
			var got []*pb.SequenceMinibatch
			for n, g := range groups {
				got = append(got, g.Minibatches...)
				sentBytes += proto.Size(g)
				most := 1 << min(n, 20)
				if len(g.Minibatches) == 0 || len(g.Minibatches) > most {
					t.Fatalf("%s, group_bytes %d: message %d holds %d minibatches, want 1 to %d", c.name, limit, n, len(g.Minibatches), most)
				}
				size, before := 0, 0
				for _, m := range g.Minibatches {
					before = size
					size += proto.Size(m)
				}
				if before >= int(limit) {
					t.Fatalf("%s, group_bytes %d: message %d was full (%d bytes) before its last minibatch", c.name, limit, n, before)
				}
				if n < len(groups)-1 && len(g.Minibatches) < most && size < int(limit) {
					t.Fatalf("%s, group_bytes %d: message %d sent with %d minibatches, %d bytes", c.name, limit, n, len(g.Minibatches), size)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%s, group_bytes %d: %d minibatches, Sequences sent %d", c.name, limit, len(got), len(want))
			}
			for i := range got {
				if !proto.Equal(got[i], want[i]) {
					t.Fatalf("%s, group_bytes %d: minibatch %d differs from Sequences'", c.name, limit, i)
				}
			}
		}
	}
	if got := counter(t, reg, "batchprep_serve_bytes_sent_total", "sequence_groups"); got != float64(sentBytes) {
		t.Fatalf("bytes sent: metric %v, the groups received %d", got, sentBytes)
	}
}

// counter is the value of a counter's series whose call label is call.
func counter(t *testing.T, g *prometheus.Registry, name, call string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.Metric {
			for _, l := range m.Label {
				if l.GetName() == "call" && l.GetValue() == call {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no series %s{call=%q}", name, call)
	return 0
}

func collectGroupMessages(t *testing.T, conn *grpc.ClientConn, req *pb.SequenceRequest) []*pb.SequenceGroup {
	t.Helper()
	st, err := pb.NewBatchesClient(conn).SequenceGroups(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var groups []*pb.SequenceGroup
	for {
		g, err := st.Recv()
		if err == io.EOF {
			return groups
		}
		if err != nil {
			t.Fatalf("SequenceGroups(%v): %v", req, err)
		}
		groups = append(groups, g)
	}
}
