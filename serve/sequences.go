package serve

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
)

// Sequences streams minibatches, one per message (invariants 1, 2, 4, 5).
func (s *Server) Sequences(req *pb.SequenceRequest, stream pb.Batches_SequencesServer) (err error) {
	const call = "sequences"
	s.metrics.clients.WithLabelValues(call).Inc()
	defer func() {
		s.metrics.clients.WithLabelValues(call).Dec()
		s.metrics.calls.WithLabelValues(call, status.Code(err).String()).Inc()
	}()
	if req.Columns || req.SharedMemory {
		return status.Error(codes.InvalidArgument, "columns, shared_memory: only SequenceGroups sends columns; Sequences sends one minibatch per message")
	}
	bytes := s.metrics.bytes.WithLabelValues(call)
	var bufs buffers
	return s.sequences(stream.Context(), req, call, func(mb minibatch, state []byte, warnings []string, _ bool) error {
		m := encodeMinibatch(mb, state, &bufs, req)
		m.Warnings = warnings
		size := proto.Size(m)
		if int64(size) > s.opts.MaxMinibatchBytes {
			return s.tooBig(mb.Step, size)
		}
		if err := stream.Send(m); err != nil {
			return err
		}
		bufs.recycle()
		bytes.Add(float64(size))
		return nil
	})
}

// SequenceGroups streams the minibatches of Sequences in groups
// (invariant 8): the n-th message holds at most 2^n minibatches and is sent
// once it holds group_bytes encoded bytes, or at the end of the stream.
func (s *Server) SequenceGroups(req *pb.SequenceRequest, stream pb.Batches_SequenceGroupsServer) (err error) {
	const call = "sequence_groups"
	s.metrics.clients.WithLabelValues(call).Inc()
	defer func() {
		s.metrics.clients.WithLabelValues(call).Dec()
		s.metrics.calls.WithLabelValues(call, status.Code(err).String()).Inc()
	}()
	limit, err := groupBytes(req.GroupBytes)
	if err != nil {
		return err
	}
	bytes := s.metrics.bytes.WithLabelValues(call)
	if req.Columns {
		return s.columnGroups(stream, req, call, limit, bytes)
	}
	if req.SharedMemory {
		return status.Error(codes.InvalidArgument, "shared_memory: only with columns")
	}
	g := &pb.SequenceGroup{}
	size, wire, most := 0, 0, 1
	var bufs buffers
	flush := func() error {
		if len(g.Minibatches) == 0 {
			return nil
		}
		if err := stream.Send(g); err != nil {
			return err
		}
		bufs.recycle()
		clear(g.Minibatches)
		bytes.Add(float64(wire))
		g.Minibatches, size, wire = g.Minibatches[:0], 0, 0
		if most < 1<<20 {
			most *= 2
		}
		return nil
	}
	err = s.sequences(stream.Context(), req, call, func(mb minibatch, state []byte, warnings []string, last bool) error {
		m := encodeMinibatch(mb, state, &bufs, req)
		m.Warnings = warnings
		n := proto.Size(m)
		if int64(n) > s.opts.MaxMinibatchBytes {
			return s.tooBig(mb.Step, n)
		}
		g.Minibatches = append(g.Minibatches, m)
		wire += 1 + protowire.SizeVarint(uint64(n)) + n // field 1, length, message
		if size += n; size >= limit || len(g.Minibatches) >= most || last {
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

// defaultGroupBytes is SequenceRequest.group_bytes's default.
const defaultGroupBytes = 256 << 10

func groupBytes(v int32) (int, error) {
	switch {
	case v == 0:
		return defaultGroupBytes, nil
	case v < 0 || v > 64<<20:
		return 0, status.Errorf(codes.InvalidArgument, "group_bytes %d: must be in [0, %d]", v, 64<<20)
	}
	return int(v), nil
}

// sequences runs one call's source (or mixture) and hands each minibatch to
// emit, with the state after it, the reader's diagnostics since the
// previous one and whether it is the last. mb and state are valid until
// emit returns.
func (s *Server) sequences(ctx context.Context, req *pb.SequenceRequest, call string,
	emit func(mb minibatch, state []byte, warnings []string, last bool) error) error {
	setup, err := checkSequenceRequest(req)
	if err != nil {
		return err
	}
	if err := s.checkLimits(setup); err != nil {
		return err
	}
	var diag diagnostics
	tl, closeAll, err := s.openTimeline(ctx, setup, &diag)
	if err != nil {
		return err
	}
	defer closeAll()
	switch {
	case setup.state != nil:
		if err := tl.Restore(*setup.state); err != nil {
			return status.Errorf(codes.FailedPrecondition, "state: %v", err)
		}
	case setup.built.HasStart:
		if err := tl.Seek(setup.built.Start); err != nil {
			return status.Errorf(codes.InvalidArgument, "start: %v", err)
		}
	}
	states, err := newStateEncoder(tl)
	if err != nil {
		return status.Errorf(codes.Internal, "encoding the state: %v", err)
	}
	states.reuse = req.Columns // columns.add copies the state

	sent, samples := s.metrics.batches.WithLabelValues(call), s.metrics.samples
	wait := s.metrics.parseWait.WithLabelValues(call)
	for n := int64(0); setup.maxMinibatches == 0 || n < setup.maxMinibatches; n++ {
		if tl.Epoch() >= setup.epochs {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return status.FromContextError(err).Err()
		}
		t0 := time.Now()
		mb, err := tl.next(setup.k)
		wait.Add(time.Since(t0).Seconds())
		if err != nil {
			return s.readError(codes.DataLoss, setup, err)
		}
		if err := ctx.Err(); err != nil {
			return status.FromContextError(err).Err()
		}
		last := tl.Epoch() >= setup.epochs || n+1 == setup.maxMinibatches
		if err := emit(mb, states.encode(tl, mb.Minibatch), diag.take(nil), last); err != nil {
			return err
		}
		sent.Inc()
		samples.Add(float64(mb.End - mb.Start))
	}
	return nil
}
