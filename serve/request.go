package serve

import (
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/batchprep/batchprep/corpus/readopts"
	"github.com/batchprep/batchprep/corpus/source"
	pb "github.com/batchprep/batchprep/proto/batchpreppb"
)

// sequenceSetup is a checked SequenceRequest.
type sequenceSetup struct {
	file           string
	built          readopts.Built
	epochs         int
	maxMinibatches int64
	k              int
	state          *source.State
}

// checkSequenceRequest validates req and converts it as `batchprep read`
// converts its flags (invariants 1, 5); it touches no file.
func checkSequenceRequest(req *pb.SequenceRequest) (*sequenceSetup, error) {
	if len(req.Files) != 1 {
		return nil, status.Errorf(codes.InvalidArgument, "files: want exactly one CTF file, got %d", len(req.Files))
	}
	if req.K < 0 {
		return nil, status.Errorf(codes.InvalidArgument, "k %d: must be >= 0", req.K)
	}
	o := readopts.Defaults()
	o.Streams, o.DefinesMBSize, o.Label = req.Streams, req.DefinesMbSize, req.Label
	o.Given = map[string]bool{}
	if req.Mb != "" {
		o.MB = req.Mb
	}
	if req.EpochSize != "" {
		o.EpochSize = req.EpochSize
	}
	if req.Epochs != 0 {
		o.Epochs = int(req.Epochs)
	}
	o.MaxMinibatches = req.MaxMinibatches
	if req.Randomize != "" {
		o.Randomize = req.Randomize
	}
	if req.WindowChunks != 0 {
		o.WindowChunks, o.Given["window-chunks"] = int(req.WindowChunks), true
	}
	if req.WindowSamples != 0 {
		o.WindowSamples, o.Given["window-samples"] = req.WindowSamples, true
	}
	o.Seed = req.Seed
	if req.ChunkBytes != 0 {
		o.ChunkBytes, o.Given["chunk-bytes"] = req.ChunkBytes, true
	}
	if req.ChunkSequences != 0 {
		o.ChunkSequences, o.Given["chunk-sequences"] = int(req.ChunkSequences), true
	}
	if req.Workers != 0 {
		o.Workers = int(req.Workers)
	}
	o.Rank, o.CutAtSweep, o.MaxErrors = int(req.Rank), req.CutAtSweep, int(req.MaxErrors)
	if req.Start != nil {
		o.Start, o.Given["start"] = *req.Start, true
	}
	o.HasState = len(req.State) > 0
	b, err := o.Build()
	if err != nil {
		if fe, ok := err.(*readopts.FieldError); ok {
			return nil, status.Error(codes.InvalidArgument, fe.Render(readopts.RequestName))
		}
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	s := &sequenceSetup{file: req.Files[0], built: b, epochs: o.Epochs, maxMinibatches: o.MaxMinibatches, k: int(req.K)}
	if o.HasState {
		st, err := source.DecodeState(req.State)
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, fmt.Sprintf("state: %v", err))
		}
		s.state = &st
	}
	return s, nil
}
