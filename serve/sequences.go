package serve

import (
	"errors"
	"io/fs"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/source"
)

// Sequences streams minibatches (invariants 1, 2, 4, 5).
func (s *Server) Sequences(req *pb.SequenceRequest, stream pb.Batches_SequencesServer) (err error) {
	const call = "sequences"
	s.metrics.clients.WithLabelValues(call).Inc()
	defer func() {
		s.metrics.clients.WithLabelValues(call).Dec()
		s.metrics.calls.WithLabelValues(call, status.Code(err).String()).Inc()
	}()
	setup, err := checkSequenceRequest(req)
	if err != nil {
		return err
	}
	r, release, err := s.readers.acquire(setup.file, setup.built.CTF)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return status.Errorf(codes.NotFound, "files: %v", err)
		}
		return status.Errorf(codes.InvalidArgument, "files: %v", err)
	}
	defer release()
	src, err := source.New(r, setup.built.Source)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "files: %v", err)
	}
	defer src.Close()
	switch {
	case setup.state != nil:
		if err := src.Restore(*setup.state); err != nil {
			return status.Errorf(codes.FailedPrecondition, "state: %v", err)
		}
	case setup.built.HasStart:
		if err := src.Seek(setup.built.Start); err != nil {
			return status.Errorf(codes.InvalidArgument, "start: %v", err)
		}
	}
	ctx := stream.Context()
	sent, samples := s.metrics.batches.WithLabelValues(call), s.metrics.samples
	bytes, wait := s.metrics.bytes.WithLabelValues(call), s.metrics.parseWait.WithLabelValues(call)
	for n := int64(0); setup.maxMinibatches == 0 || n < setup.maxMinibatches; n++ {
		if src.Epoch() >= setup.epochs {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return status.FromContextError(err).Err()
		}
		t0 := time.Now()
		var mb *source.Minibatch
		if setup.k > 0 {
			mb, err = src.NextK(setup.k)
		} else {
			mb, err = src.Next()
		}
		wait.Add(time.Since(t0).Seconds())
		if err != nil {
			return status.Errorf(codes.DataLoss, "reading %s: %v", setup.file, err)
		}
		st, err := source.EncodeState(src.State())
		if err != nil {
			return status.Errorf(codes.Internal, "encoding the state: %v", err)
		}
		msg := encodeMinibatch(mb, st)
		if err := stream.Send(msg); err != nil {
			return err
		}
		sent.Inc()
		samples.Add(float64(mb.End - mb.Start))
		bytes.Add(float64(proto.Size(msg)))
	}
	return nil
}
