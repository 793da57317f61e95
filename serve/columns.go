package serve

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
)

// columnGroups is SequenceGroups with columns (and shared_memory): the
// same minibatches in the same groups, each group one columns message.
func (s *Server) columnGroups(stream pb.Batches_SequenceGroupsServer, req *pb.SequenceRequest, call string,
	limit int, sent prometheus.Counter) (err error) {
	ctx := stream.Context()
	var rg *ring
	if req.SharedMemory {
		if p, ok := peer.FromContext(ctx); !ok || p.Addr == nil || p.Addr.Network() != "unix" {
			return status.Error(codes.FailedPrecondition, "shared_memory: only for a client on this host over a Unix socket (serve --listen unix:PATH)")
		}
		if rg, err = newRing(ringBytes(limit)); err != nil {
			return status.Errorf(codes.Internal, "shared_memory: %v", err)
		}
		rg.stall = s.opts.StallTimeout
		defer func() {
			// The reader opens the ring's path while the file is open here:
			// close it once everything sent is copied out (or the call is
			// gone).
			if derr := rg.drain(ctx); derr != nil && err == nil && ctx.Err() == nil {
				err = status.Errorf(codes.Internal, "shared_memory: %v", derr)
				if errors.Is(derr, errRingStalled) {
					err = stalledShared(s.opts.StallTimeout)
				}
			}
			rg.close()
		}()
	}
	cols := &columns{elide: req.ElideUnitSparse}
	size, most, pathSent := 0, 1, false
	flush := func() error {
		if cols.count == 0 {
			return nil
		}
		g := cols.message()
		if rg != nil && uint64(len(g.Arrays)) <= rg.size/2 {
			pos, buf, err := rg.reserve(ctx, len(g.Arrays))
			if err != nil {
				if ctx.Err() != nil {
					return status.FromContextError(ctx.Err()).Err()
				}
				if errors.Is(err, errRingStalled) {
					return stalledShared(s.opts.StallTimeout)
				}
				return status.Errorf(codes.FailedPrecondition, "shared_memory: %v", err)
			}
			copy(buf, g.Arrays)
			g.Shared = &pb.SharedArrays{Size: rg.size, Position: pos, Length: uint64(len(g.Arrays))}
			if !pathSent {
				g.Shared.Path, pathSent = rg.path, true
			}
			g.Arrays = nil
		}
		wire := proto.Size(g)
		if err := stream.Send(g); err != nil {
			return err
		}
		cols.reset()
		sent.Add(float64(wire))
		size = 0
		if most < 1<<20 {
			most *= 2
		}
		return nil
	}
	err = s.sequences(ctx, req, call, func(mb minibatch, state []byte, warnings []string, last bool) error {
		n := cols.add(mb, state, warnings)
		if int64(n) > s.opts.MaxMinibatchBytes {
			return s.tooBig(mb.Step, n)
		}
		if size += n; size >= limit || cols.count >= most || last {
			return flush()
		}
		return nil
	})
	if err != nil {
		// Minibatches prepared before a data error are still delivered.
		if ferr := flush(); ferr != nil {
			return ferr
		}
		return err
	}
	return flush()
}

// ringBytes is the data size of a call's ring for messages of about limit
// bytes: room for eight, between 64 KiB and 256 MiB.
func ringBytes(limit int) int {
	return min(max(8*limit, 64<<10), 256<<20)
}

// columnsFixed is the number of table entries of a minibatch before its
// streams' (SequenceGroup.table).
const columnsFixed = 9

// columns builds the messages of a SequenceGroups call with
// SequenceRequest.columns: each minibatch added becomes a row of the
// group's table and a part of its arrays, ids and states. The buffers are
// reused from message to message (grpc-go has encoded a message when Send
// returns), so a message costs no allocation once the first ones have
// grown them.
type columns struct {
	elide                      bool
	table, arrays, ids, states []byte
	notes                      []*pb.MinibatchNotes
	streams                    []*pb.StreamData // the next message's stream descriptions
	sentStreams                bool
	tail, newTail              []byte // the state tail sent last; the next message's
	corpora                    int32  // a mixture's corpora, for the next message (the first)
	elided                     []uint8
	count, idCount             int
}

// fingerprintField starts the part of a state that is the same for every
// minibatch of a call (the state tail of packed and columns messages).
var fingerprintField = []byte(`,"fingerprint":`)

// splitState returns the state's head and its tail (empty when the state
// holds no fingerprint).
func splitState(state []byte) (head, tail []byte) {
	if i := bytes.Index(state, fingerprintField); i >= 0 {
		return state[:i], state[i:]
	}
	return state, nil
}

// add appends mb, the state after it and the reader's diagnostics since
// the previous minibatch; it returns the bytes added, the minibatch's
// encoded size.
func (c *columns) add(mb minibatch, state []byte, warnings []string) int {
	c.elided = elision(mb.Minibatch, c.elide, c.elided)
	if !c.sentStreams {
		for i := range mb.Streams {
			b := &mb.Streams[i]
			c.streams = append(c.streams, &pb.StreamData{Name: b.Name, Dim: int32(b.Dim), Sparse: b.Sparse})
		}
		c.corpora = int32(mb.corpora)
		c.sentStreams = true
	}
	n := arraysBytes(mb, c.elided)
	padded := (n + 7) &^ 7
	at := len(c.arrays)
	c.arrays = grow(c.arrays, padded)
	writeArrays(arena(c.arrays[at:at+n]), mb, c.elided)
	clear(c.arrays[at+n:])

	// The tail is the call's fingerprint: sent once. A state that does not
	// end with it goes whole (flag 4).
	var flags uint64
	head, tail := splitState(state)
	switch {
	case tail == nil:
		flags |= 4
	case c.tail == nil:
		c.tail = append([]byte(nil), tail...)
		c.newTail = c.tail
	case !bytes.Equal(tail, c.tail):
		head = state
		flags |= 4
	}
	c.states = append(c.states, head...)

	added := len(c.ids)
	for _, id := range mb.IDs {
		if c.idCount > 0 {
			c.ids = append(c.ids, '\n')
		}
		c.ids = append(c.ids, id...)
		c.idCount++
	}
	added = len(c.ids) - added

	if mb.EndOfSweep {
		flags |= 1
	}
	if mb.EndOfEpoch {
		flags |= 2
	}
	t := c.table
	for _, v := range [columnsFixed]uint64{mb.Step, uint64(mb.Epoch), mb.Sweep, mb.Start, mb.End, flags,
		uint64(len(mb.Sequences)), uint64(padded), uint64(len(head))} {
		t = binary.LittleEndian.AppendUint64(t, v)
	}
	for i := range mb.Streams {
		b := &mb.Streams[i]
		entries := 0
		if b.Sparse {
			entries = len(b.Indices)
		}
		t = binary.LittleEndian.AppendUint64(t, uint64(b.Samples()))
		t = binary.LittleEndian.AppendUint64(t, uint64(entries))
		t = binary.LittleEndian.AppendUint64(t, uint64(c.elided[i]))
	}
	c.table = t

	if len(warnings) > 0 || len(mb.Skipped) > 0 {
		note := &pb.MinibatchNotes{Step: mb.Step, Warnings: warnings}
		for _, s := range mb.Skipped {
			note.Skipped = append(note.Skipped, int64(s.Sequence))
		}
		if mb.corpora > 0 {
			note.SkippedCorpus = int32List(mb.skippedCorpus)
		}
		c.notes = append(c.notes, note)
	}
	c.count++
	return padded + len(head) + added + 8*(columnsFixed+3*len(mb.Streams))
}

// grow extends b by n bytes, keeping its contents.
func grow(b []byte, n int) []byte {
	if need := len(b) + n; need > cap(b) {
		nb := make([]byte, len(b), need+need/2)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

// message returns the group of the minibatches added since the last reset.
// Its bytes are the builder's: send it before the next add or reset.
func (c *columns) message() *pb.SequenceGroup {
	return &pb.SequenceGroup{Table: c.table, Arrays: c.arrays, Ids: c.ids, States: c.states,
		StateTail: c.newTail, Streams: c.streams, Notes: c.notes, Corpora: c.corpora}
}

// reset empties the group once its message is sent.
func (c *columns) reset() {
	c.table, c.arrays, c.ids, c.states = c.table[:0], c.arrays[:0], c.ids[:0], c.states[:0]
	c.notes, c.streams, c.newTail, c.corpora = nil, nil, nil, 0
	c.count, c.idCount = 0, 0
}

// writeArrays writes mb's arrays into a in SequenceMinibatch.arrays's
// layout, leaving out what elided says (see elision).
func writeArrays(a arena, mb minibatch, elided []uint8) {
	a.ints(mb.Sequences)
	if mb.corpora > 0 {
		a.intsAs32(mb.corpus)
	}
	for i := range mb.Streams {
		b := &mb.Streams[i]
		lengths := a.take(4 * len(mb.Sequences))
		for j := range len(mb.Sequences) {
			binary.LittleEndian.PutUint32(lengths[4*j:], uint32(b.SeqStart[j+1]-b.SeqStart[j]))
		}
		if b.Sparse {
			if elided[i]&1 == 0 {
				a.int32s(b.RowStart)
			}
			a.int32s(b.Indices)
			if elided[i]&2 == 0 {
				a.float32s(b.Values)
			}
		} else {
			a.float32s(b.Dense)
		}
	}
}
