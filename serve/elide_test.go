package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// expand rebuilds the arrays elide_unit_sparse left out, as a client does.
func expand(m *pb.SequenceMinibatch) *pb.SequenceMinibatch {
	m = proto.Clone(m).(*pb.SequenceMinibatch)
	for _, s := range m.Streams {
		n := len(s.Indices) / 4
		if s.UnitRows {
			var b bytes.Buffer
			for i := range n + 1 {
				b.Write([]byte{byte(i), byte(i >> 8), byte(i >> 16), byte(i >> 24)})
			}
			s.Indptr, s.UnitRows = b.Bytes(), false
		}
		if s.UnitValues {
			s.Values = bytes.Repeat([]byte{0, 0, 0x80, 0x3f}, n) // 1.0f little-endian
			s.UnitValues = false
		}
		if len(s.Indptr) == 0 {
			s.Indptr = nil
		}
		if len(s.Values) == 0 {
			s.Values = nil
		}
	}
	return m
}

// TestElideUnitSparse: invariant 9; with elide_unit_sparse, the messages are those
// without it once a client rebuilds what was left out, and exactly the
// one-entry rows and the ones are left out: stream w is one-hot (both),
// v has one entry of value 2 per sample (rows only), u has two entries of
// value 1 on odd lines (values only, and rows on minibatches of even lines
// only), x is dense.
func TestElideUnitSparse(t *testing.T) {
	var b bytes.Buffer
	for i := range 60 {
		for j := range 1 + i%3 {
			u := fmt.Sprintf("%d:1", i%5)
			if (i+j)%2 == 1 {
				u += fmt.Sprintf(" %d:1", 5+i%3)
			}
			fmt.Fprintf(&b, "%d |w %d:1 |v %d:2 |u %s |x %d\n", i, (i+j)%9, j, u, i)
		}
	}
	file := filepath.Join(t.TempDir(), "onehot.ctf")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, conn, _ := startServer(t, serve.Options{})
	rowsElided := 0
	for _, mbSize := range []string{"1", "4", "9"} {
		req := &pb.SequenceRequest{Files: []string{file}, Streams: []string{"w:9:sparse", "v:3:sparse", "u:8:sparse", "x:1"},
			Mb: mbSize, ChunkSequences: 7, WindowChunks: 3, Epochs: 2}
		want := collect(t, conn, req)
		el := proto.Clone(req).(*pb.SequenceRequest)
		el.ElideUnitSparse = true
		for _, got := range [][]*pb.SequenceMinibatch{collect(t, conn, el), mustGroups(t, conn, el)} {
			if len(got) != len(want) {
				t.Fatalf("mb %s: %d minibatches, want %d", mbSize, len(got), len(want))
			}
			for i, m := range got {
				w, v, u, x := m.Streams[0], m.Streams[1], m.Streams[2], m.Streams[3]
				if !w.UnitRows || !w.UnitValues || len(w.Indptr)+len(w.Values) != 0 {
					t.Fatalf("mb %s minibatch %d: one-hot stream w sent %d+%d bytes (unit %v %v)", mbSize, i, len(w.Indptr), len(w.Values), w.UnitRows, w.UnitValues)
				}
				if !v.UnitRows || v.UnitValues {
					t.Fatalf("mb %s minibatch %d: stream v: unit rows %v, unit values %v", mbSize, i, v.UnitRows, v.UnitValues)
				}
				if !u.UnitValues {
					t.Fatalf("mb %s minibatch %d: stream u: values of 1 not elided", mbSize, i)
				}
				if u.UnitRows {
					rowsElided++
				}
				if x.UnitRows || x.UnitValues {
					t.Fatalf("mb %s minibatch %d: dense stream marked unit", mbSize, i)
				}
				if !proto.Equal(expand(m), want[i]) {
					t.Fatalf("mb %s minibatch %d: rebuilt message differs from the plain one", mbSize, i)
				}
			}
		}
	}
	if rowsElided == 0 {
		t.Fatal("stream u never had one entry per sample in a minibatch: the case is not exercised")
	}
}

func mustGroups(t *testing.T, conn *grpc.ClientConn, req *pb.SequenceRequest) []*pb.SequenceMinibatch {
	t.Helper()
	got, err := collectGroups(context.Background(), conn, req)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
