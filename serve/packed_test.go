package serve_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// unpack turns packed messages (in call order) back into the form without
// packed, following SequenceMinibatch.arrays' documented layout, as a
// client does (mixed: the call's request has weights, so each minibatch's
// corpus follows its sequences); it fails on a buffer longer or shorter
// than the counts say.
func unpack(t *testing.T, msgs []*pb.SequenceMinibatch, mixed bool) []*pb.SequenceMinibatch {
	t.Helper()
	var tail []byte
	out := make([]*pb.SequenceMinibatch, len(msgs))
	for k, m := range msgs {
		m = proto.Clone(m).(*pb.SequenceMinibatch)
		if m.SequenceCount == nil {
			t.Fatalf("message %d: no sequence_count", k)
		}
		n, buf := int(*m.SequenceCount), m.Arrays
		take := func(size int) []byte {
			if size > len(buf) {
				t.Fatalf("message %d: arrays holds %d bytes, want at least %d more", k, len(buf), size)
			}
			b := buf[:size]
			buf = buf[size:]
			if size == 0 {
				return nil
			}
			return b
		}
		m.Sequences = take(8 * n)
		if mixed {
			m.Corpus = take(4 * n)
		}
		for _, s := range m.Streams {
			s.Lengths = take(4 * n)
			if s.Sparse {
				if !s.UnitRows {
					s.Indptr = take(4 * int(s.Samples+1))
				}
				s.Indices = take(4 * int(s.Entries))
				if !s.UnitValues {
					s.Values = take(4 * int(s.Entries))
				}
			} else {
				s.Dense = take(4 * int(s.Samples) * int(s.Dim))
			}
			s.Samples, s.Entries = 0, 0
		}
		if len(buf) != 0 {
			t.Fatalf("message %d: %d bytes of arrays left over", k, len(buf))
		}
		if len(m.IdsJoined) > 0 {
			m.Ids = strings.Split(string(m.IdsJoined), "\n")
		}
		if len(m.StateTail) > 0 {
			tail = m.StateTail
		}
		if k == 0 && tail == nil {
			t.Fatal("the first message has no state_tail")
		}
		m.State = append(append([]byte(nil), m.State...), tail...)
		m.Arrays, m.SequenceCount, m.IdsJoined, m.StateTail = nil, nil, nil, nil
		out[k] = m
	}
	return out
}

// TestPacked: with packed, every minibatch, once unpacked as
// SequenceMinibatch.arrays documents, equals the message without packed,
// for both sequence calls, with and without elide_unit_sparse; the state
// tail is sent once per call.
func TestPacked(t *testing.T) {
	_, conn, _ := startServer(t, serve.Options{})
	setups := packingSetups(t)
	for _, s := range setups {
		for _, elide := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/elide=%v", s.name, elide), func(t *testing.T) {
				plain := proto.Clone(s.req).(*pb.SequenceRequest)
				plain.ElideUnitSparse = elide
				packed := proto.Clone(plain).(*pb.SequenceRequest)
				packed.Packed = true
				want := collect(t, conn, plain)
				for call, got := range map[string][]*pb.SequenceMinibatch{
					"Sequences": collect(t, conn, packed), "SequenceGroups": mustGroups(t, conn, packed)} {
					tails := 0
					for _, m := range got {
						if len(m.StateTail) > 0 {
							tails++
						}
						if len(m.Sequences) > 0 || len(m.Ids) > 0 {
							t.Fatalf("%s: a packed message has sequences or ids fields", call)
						}
					}
					if len(got) != len(want) || tails != 1 {
						t.Fatalf("%s: %d messages (%d with a state tail), want %d (1)", call, len(got), tails, len(want))
					}
					for i, m := range unpack(t, got, len(s.req.Weights) > 0) {
						if !proto.Equal(m, want[i]) {
							t.Fatalf("%s: minibatch %d unpacked:\n%v\nwithout packed:\n%v", call, i, m, want[i])
						}
					}
				}
			})
		}
	}
}

// setup is one call of the packing tests: a name and a request.
type setup struct {
	name string
	req  *pb.SequenceRequest
}

// packingSetups returns the calls that TestPacked and TestColumns check
// every encoding on: each case of contractCases and mixtureCases, and a corpus whose sparse
// streams are one-hot (so that elide_unit_sparse has something to elide).
func packingSetups(t *testing.T) []setup {
	t.Helper()
	var b bytes.Buffer
	for i := range 50 {
		for j := range 1 + i%3 {
			fmt.Fprintf(&b, "%d |w %d:1 |v %d:2 3:1 |x %d %d\n", i, (i+j)%9, j, 1000+i, j)
		}
	}
	onehot := filepath.Join(t.TempDir(), "onehot.ctf")
	if err := os.WriteFile(onehot, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var setups []setup
	for _, c := range contractCases(writeCorpus(t, 47)) {
		setups = append(setups, setup{c.name, c.req})
	}
	for _, c := range mixtureCases(t) {
		setups = append(setups, setup{c.name, c.req})
	}
	return append(setups, setup{"one-hot", &pb.SequenceRequest{Files: []string{onehot},
		Streams: []string{"w:9:sparse", "v:4:sparse", "x:2"}, Mb: "7", Epochs: 2}})
}
