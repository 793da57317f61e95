package serve

import (
	"encoding/binary"
	"math"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/plan"
	pb "github.com/batchprep/batchprep/proto/batchpreppb"
)

// graphSetup is a checked GraphRequest.
type graphSetup struct {
	worker int // -1: all workers
	state  *plan.State
	max    int64
}

// checkGraphRequest validates what it can without files (invariant 5).
func checkGraphRequest(req *pb.GraphRequest) (*graphSetup, error) {
	if req.Config == "" {
		return nil, status.Error(codes.InvalidArgument, "config: a graph config path is required")
	}
	if req.MaxBatches < 0 {
		return nil, status.Errorf(codes.InvalidArgument, "max_batches %d: must be >= 0", req.MaxBatches)
	}
	g := &graphSetup{worker: int(req.Worker), max: req.MaxBatches}
	if req.AllWorkers {
		g.worker = -1
	} else if req.Worker < 0 {
		return nil, status.Errorf(codes.InvalidArgument, "worker %d: must be >= 0 (or set all_workers)", req.Worker)
	}
	if len(req.State) > 0 {
		st, err := plan.DecodeState(req.State)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "state: %v", err)
		}
		g.state = st
	}
	return g, nil
}

// Graph streams a plan's records (invariants 4, 5, 7).
func (s *Server) Graph(req *pb.GraphRequest, stream pb.Batches_GraphServer) (err error) {
	const call = "graph"
	s.metrics.clients.WithLabelValues(call).Inc()
	defer func() {
		s.metrics.clients.WithLabelValues(call).Dec()
		s.metrics.calls.WithLabelValues(call, status.Code(err).String()).Inc()
	}()
	g, err := checkGraphRequest(req)
	if err != nil {
		return err
	}
	cfg, err := s.loadGraphConfig(req.Config)
	if err != nil {
		return err
	}
	store, err := edgestore.Open(cfg)
	if err != nil {
		s.opts.Logf("config %q: opening the edge store: %v", req.Config, err)
		msg := err.Error()
		if !quotesNothing(msg) {
			msg = "damaged, or not imported (the server's log has the details)"
		}
		return status.Errorf(codes.FailedPrecondition, "config: %q: opening the edge store: %s", req.Config, msg)
	}
	defer store.Close()
	p, err := plan.New(store, plan.OptionsFromConfig(cfg))
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "config: %v", err)
	}
	if g.worker >= p.Options().Workers {
		return status.Errorf(codes.InvalidArgument, "worker %d: must be in [0, %d) (the config's workers)", g.worker, p.Options().Workers)
	}
	if err := s.checkBatchSize(req.Config, p.Options().BatchSize); err != nil {
		return err
	}
	st := p.Start()
	if g.state != nil {
		st = *g.state
	}
	it, err := p.Iter(st)
	if err != nil {
		return status.Errorf(codes.FailedPrecondition, "state: %v", err)
	}
	ctx := stream.Context()
	sent, bytes, wait := s.metrics.batches.WithLabelValues(call), s.metrics.bytes.WithLabelValues(call), s.metrics.parseWait.WithLabelValues(call)
	var batches int64
	var ords []uint64
	for g.max == 0 || batches < g.max {
		if err := ctx.Err(); err != nil {
			return status.FromContextError(err).Err()
		}
		t0 := time.Now()
		ok := it.Next()
		wait.Add(time.Since(t0).Seconds())
		if !ok {
			break
		}
		rec := it.Record()
		if rec.Kind == plan.BatchRecord && g.worker >= 0 && rec.Worker != g.worker {
			continue
		}
		msg := &pb.GraphRecord{Epoch: int32(rec.Epoch), EdgeSet: int32(rec.EdgeSet), Chunk: int32(rec.Chunk),
			BucketLhs: int32(rec.Bucket.Lhs), BucketRhs: int32(rec.Bucket.Rhs), Index: int32(rec.Index),
			State: it.State().Encode()}
		if rec.Kind == plan.BucketRecord {
			msg.Kind, msg.Edges, msg.Resumed = pb.GraphRecord_BUCKET, int64(rec.Edges), rec.Resumed
			if err := s.recordFits(rec, 8*int64(len(rec.Holdout))); err != nil {
				return err
			}
			ords = rec.Ordinals(ords[:0], rec.Holdout)
			a := make(arena, 8*len(ords))
			msg.Holdout = a.uint64s(ords)
		} else {
			batches++
			msg.Kind, msg.Worker, msg.Batch, msg.Relation = pb.GraphRecord_BATCH, int32(rec.Worker), int32(rec.Batch), int32(rec.Relation)
			n := batchRecordBytes * len(rec.Rows)
			if rec.Data.Weight != nil {
				n += 4 * len(rec.Rows)
			}
			if err := s.recordFits(rec, int64(n)); err != nil {
				return err
			}
			ords = rec.Ordinals(ords[:0], rec.Rows)
			a := make(arena, n)
			msg.Ordinals = a.uint64s(ords)
			msg.Lhs, msg.Rhs, msg.Rel = a.gather(rec.Data.Lhs, rec.Rows), a.gather(rec.Data.Rhs, rec.Rows), a.gather(rec.Data.Rel, rec.Rows)
			if rec.Data.Weight != nil {
				w := a.take(4 * len(rec.Rows))
				for i, r := range rec.Rows {
					binary.LittleEndian.PutUint32(w[4*i:], math.Float32bits(rec.Data.Weight[r]))
				}
				msg.Weight = w
			}
		}
		if err := stream.Send(msg); err != nil {
			return err
		}
		sent.Inc()
		bytes.Add(float64(proto.Size(msg)))
	}
	if err := it.Err(); err != nil {
		return status.Errorf(codes.DataLoss, "plan: %v", err)
	}
	return nil
}

// gather returns col[rows] as little-endian uint32s.
func (a *arena) gather(col []uint32, rows []uint32) []byte {
	b := a.take(4 * len(rows))
	for i, r := range rows {
		binary.LittleEndian.PutUint32(b[4*i:], col[r])
	}
	return b
}
