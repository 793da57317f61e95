package serve

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
)

// DefaultMaxConcurrentCalls is Options.MaxConcurrentCalls's default.
const DefaultMaxConcurrentCalls = 16

// callLimit bounds the Batches calls that run at once (invariant 12): a
// call past the bound waits for a free slot, in a queue as long as the
// bound; a call past the queue is refused.
type callLimit struct {
	max     int
	slots   chan struct{}
	waiting atomic.Int64
	gauge   prometheus.Gauge // the calls waiting
}

func newCallLimit(max int, gauge prometheus.Gauge) *callLimit {
	return &callLimit{max: max, slots: make(chan struct{}, max), gauge: gauge}
}

// enter takes a slot, waiting while ctx lasts when none is free, and
// returns the function that gives it back.
func (l *callLimit) enter(ctx context.Context) (func(), error) {
	leave := func() { <-l.slots }
	select {
	case l.slots <- struct{}{}:
		return leave, nil
	default:
	}
	if l.waiting.Add(1) > int64(l.max) {
		l.waiting.Add(-1)
		return nil, status.Errorf(codes.ResourceExhausted,
			"the server runs %d calls, its limit (serve --max-concurrent-calls), and %d more wait; try again when one ends", l.max, l.max)
	}
	l.gauge.Inc()
	defer func() { l.waiting.Add(-1); l.gauge.Dec() }()
	select {
	case l.slots <- struct{}{}:
		return leave, nil
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}

var batchesPrefix = "/" + pb.Batches_ServiceDesc.ServiceName + "/"

// callNames are the call labels of the metrics, by method.
var callNames = map[string]string{"Sequences": "sequences", "SequenceGroups": "sequence_groups", "Graph": "graph"}

// limitStream runs a Batches call once it has a slot (the health service
// is not limited).
func (s *Server) limitStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if !strings.HasPrefix(info.FullMethod, batchesPrefix) {
		return h(srv, ss)
	}
	leave, err := s.calls.enter(ss.Context())
	if err != nil {
		// The call never reaches its handler, which counts the others.
		s.metrics.calls.WithLabelValues(callNames[strings.TrimPrefix(info.FullMethod, batchesPrefix)], status.Code(err).String()).Inc()
		return err
	}
	defer leave()
	return h(srv, ss)
}
