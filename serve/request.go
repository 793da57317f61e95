package serve

import (
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/batchprep/batchprep/corpus/mixture"
	"github.com/batchprep/batchprep/corpus/readopts"
	"github.com/batchprep/batchprep/corpus/source"
	pb "github.com/batchprep/batchprep/proto/batchpreppb"
)

// sequenceSetup is a checked SequenceRequest.
type sequenceSetup struct {
	file string // files[0]: the corpus, when weights is nil
	// files and weights are a mixture's corpora (weights nil: one corpus).
	files          []string
	weights        []mixture.Weight
	built          readopts.Built
	epochs         int
	maxMinibatches int64
	k              int
	state          *source.State
}

// checkSequenceRequest validates req and converts it as `batchprep read`
// converts its flags (invariants 1, 5); it touches no file.
func checkSequenceRequest(req *pb.SequenceRequest) (*sequenceSetup, error) {
	weights, err := checkWeights(req)
	if err != nil {
		return nil, err
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
	o.Rank, o.CutAtSweep, o.MaxErrors, o.Split = int(req.Rank), req.CutAtSweep, int(req.MaxErrors), req.Split
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
	s := &sequenceSetup{file: req.Files[0], files: req.Files, weights: weights, built: b, epochs: o.Epochs, maxMinibatches: o.MaxMinibatches, k: int(req.K)}
	if o.HasState {
		st, err := source.DecodeState(req.State)
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, fmt.Sprintf("state: %v", err))
		}
		s.state = &st
	}
	return s, nil
}

// MaxCorpora bounds the corpora of one mixture request: each is a file
// held open and a randomization window of its own.
const MaxCorpora = 64

// checkWeights checks files and weights: one file without weights, or a
// mixture of at most MaxCorpora files with one weight each in --mix's
// syntax (mixture.ParseWeight), all of one kind.
func checkWeights(req *pb.SequenceRequest) ([]mixture.Weight, error) {
	if len(req.Weights) == 0 {
		if len(req.Files) != 1 {
			return nil, status.Errorf(codes.InvalidArgument, "files: want exactly one corpus file, got %d (a mixture gives weights too)", len(req.Files))
		}
		return nil, nil
	}
	if len(req.Weights) != len(req.Files) {
		return nil, status.Errorf(codes.InvalidArgument, "weights: %d weights for %d files: give one weight per file", len(req.Weights), len(req.Files))
	}
	if len(req.Files) > MaxCorpora {
		return nil, status.Errorf(codes.InvalidArgument, "files: a mixture of %d corpora, more than %d", len(req.Files), MaxCorpora)
	}
	ws := make([]mixture.Weight, len(req.Weights))
	for i, v := range req.Weights {
		w, err := mixture.ParseWeight(v)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "weights[%d]: %v", i, err)
		}
		ws[i] = w
	}
	if _, err := mixture.Integers(ws); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "weights: %v (weights[i] is files[i]'s)", err)
	}
	return ws, nil
}
