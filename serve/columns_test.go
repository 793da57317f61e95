package serve_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// columnGroups returns the messages of a SequenceGroups call.
func columnGroups(t *testing.T, conn *grpc.ClientConn, req *pb.SequenceRequest) []*pb.SequenceGroup {
	t.Helper()
	st, err := pb.NewBatchesClient(conn).SequenceGroups(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var out []*pb.SequenceGroup
	for {
		g, err := st.Recv()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
}

// fromColumns turns columns messages (in call order) into the packed
// SequenceMinibatch messages they stand for, following SequenceGroup's
// documented layout as a client does; it fails on any byte the table does
// not account for and on padding that is not zeros.
func fromColumns(t *testing.T, groups []*pb.SequenceGroup) []*pb.SequenceMinibatch {
	t.Helper()
	var streams []*pb.StreamData
	var out []*pb.SequenceMinibatch
	var corpora int32
	for k, g := range groups {
		if len(g.Minibatches) > 0 {
			t.Fatalf("message %d: a columns message has minibatches", k)
		}
		if (k == 0) != (len(g.Streams) > 0) {
			t.Fatalf("message %d: %d stream descriptions (only the first message has them)", k, len(g.Streams))
		}
		if k == 0 {
			streams, corpora = g.Streams, g.Corpora
		} else if g.Corpora != 0 {
			t.Fatalf("message %d: corpora %d (only the first message has it)", k, g.Corpora)
		}
		width := 9 + 3*len(streams)
		if len(g.Table)%(8*width) != 0 {
			t.Fatalf("message %d: table of %d bytes, not rows of %d uint64s", k, len(g.Table), width)
		}
		rows := len(g.Table) / (8 * width)
		if rows == 0 {
			t.Fatalf("message %d: no minibatch", k)
		}
		notes := map[uint64]*pb.MinibatchNotes{}
		for _, n := range g.Notes {
			notes[n.Step] = n
		}
		var ids [][]byte
		if len(g.Ids) > 0 || rows > 0 {
			ids = bytes.Split(g.Ids, []byte("\n"))
		}
		arrays, states, idAt := g.Arrays, g.States, 0
		for r := range rows {
			row := make([]uint64, width)
			for i := range row {
				row[i] = binary.LittleEndian.Uint64(g.Table[8*(r*width+i):])
			}
			n := int(row[6])
			if row[5]&^3 != 0 {
				t.Fatalf("message %d row %d: flags %d (a state without the call's tail?)", k, r, row[5])
			}
			m := &pb.SequenceMinibatch{Step: row[0], Epoch: int32(row[1]), Sweep: row[2], Start: row[3], End: row[4],
				EndOfSweep: row[5]&1 != 0, EndOfEpoch: row[5]&2 != 0, SequenceCount: proto.Int32(int32(n))}
			size := 8 * n
			if corpora > 0 {
				size += 4 * n // the corpus of each sequence
			}
			for i, s := range streams {
				samples, entries, elided := row[9+3*i], row[10+3*i], row[11+3*i]
				d := &pb.StreamData{Name: s.Name, Dim: s.Dim, Sparse: s.Sparse, Samples: int64(samples),
					UnitRows: elided&1 != 0, UnitValues: elided&2 != 0}
				size += 4 * n
				if s.Sparse {
					d.Entries = int64(entries)
					size += 4 * int(entries)
					if !d.UnitRows {
						size += 4 * int(samples+1)
					}
					if !d.UnitValues {
						size += 4 * int(entries)
					}
				} else {
					size += 4 * int(samples) * int(s.Dim)
				}
				m.Streams = append(m.Streams, d)
			}
			padded := int(row[7])
			if padded != (size+7)&^7 || padded > len(arrays) {
				t.Fatalf("message %d row %d: %d bytes of arrays for counts that make %d; %d left", k, r, padded, size, len(arrays))
			}
			if size > 0 {
				m.Arrays = arrays[:size]
			}
			if !bytes.Equal(arrays[size:padded], make([]byte, padded-size)) {
				t.Fatalf("message %d row %d: padding is not zeros", k, r)
			}
			arrays = arrays[padded:]
			if int(row[8]) > len(states) {
				t.Fatalf("message %d row %d: state of %d bytes, %d left", k, r, row[8], len(states))
			}
			m.State, states = states[:row[8]], states[row[8]:]
			if idAt+n > len(ids) {
				t.Fatalf("message %d row %d: %d ids, %d left", k, r, n, len(ids)-idAt)
			}
			if n > 0 {
				m.IdsJoined = bytes.Join(ids[idAt:idAt+n], []byte("\n"))
			}
			idAt += n
			if r == 0 {
				m.StateTail = g.StateTail
			}
			if note := notes[m.Step]; note != nil {
				m.Warnings, m.Skipped, m.SkippedCorpus = note.Warnings, note.Skipped, note.SkippedCorpus
				delete(notes, m.Step)
			}
			out = append(out, m)
		}
		if len(arrays) != 0 || len(states) != 0 || (idAt != len(ids) && !(idAt == 0 && len(g.Ids) == 0)) || len(notes) != 0 {
			t.Fatalf("message %d: left over: %d bytes of arrays, %d of states, %d ids, %d notes", k, len(arrays), len(states), len(ids)-idAt, len(notes))
		}
	}
	return out
}

// TestColumns: with columns, every SequenceGroups message, read as
// SequenceGroup documents, holds exactly the packed minibatches of the
// same call without columns (arrays, ids, states, warnings and skipped
// ordinals), with and without elide_unit_sparse and at any group size; the
// stream descriptions and the state tail come once per call; Sequences
// refuses columns.
func TestColumns(t *testing.T) {
	_, conn, _ := startServer(t, serve.Options{})
	setups := packingSetups(t)
	onehot := setups[len(setups)-1].req.Files[0] // packingSetups ends with the one-hot corpus
	bad := writeCorpusBad(t, 40, func(i int) bool { return i%10 == 3 })
	setups = append(setups,
		setup{"warnings", &pb.SequenceRequest{Files: []string{bad}, Streams: []string{"x:2", "y:7:sparse"}, Mb: "9",
			MaxErrors: 10, ChunkSequences: 20}},
		setup{"mixture warnings", &pb.SequenceRequest{Files: []string{onehot, bad}, Weights: []string{"0.5", "0.5"},
			Streams: []string{"x:2"}, Mb: "9", MaxErrors: 10, ChunkSequences: 20}})
	notes, skippedCorpus := 0, 0
	for _, s := range setups {
		for _, elide := range []bool{false, true} {
			for _, groupBytes := range []int32{0, 1, 200} {
				t.Run(fmt.Sprintf("%s/elide=%v/group_bytes=%d", s.name, elide, groupBytes), func(t *testing.T) {
					packed := proto.Clone(s.req).(*pb.SequenceRequest)
					packed.ElideUnitSparse, packed.Packed, packed.GroupBytes = elide, true, groupBytes
					cols := proto.Clone(packed).(*pb.SequenceRequest)
					cols.Columns = true
					want := mustGroups(t, conn, packed)
					groups := columnGroups(t, conn, cols)
					tails := 0
					for _, g := range groups {
						if len(g.StateTail) > 0 {
							tails++
						}
						notes += len(g.Notes)
						for _, n := range g.Notes {
							skippedCorpus += len(n.SkippedCorpus)
						}
					}
					got := fromColumns(t, groups)
					if len(got) != len(want) || tails != 1 {
						t.Fatalf("%d minibatches in %d messages (%d with a state tail), want %d (1)", len(got), len(groups), tails, len(want))
					}
					for i, m := range got {
						if !proto.Equal(m, want[i]) {
							t.Fatalf("minibatch %d from columns:\n%v\npacked:\n%v", i, m, want[i])
						}
					}
				})
			}
		}
	}
	if notes == 0 || skippedCorpus == 0 {
		t.Fatal("no minibatch had warnings or skipped ordinals (of a mixture): notes are not exercised")
	}
	_, err := collectErr(context.Background(), conn, &pb.SequenceRequest{Files: []string{onehot}, Streams: []string{"x:2"}, Columns: true})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("Sequences with columns: %v, want InvalidArgument", err)
	}
}
