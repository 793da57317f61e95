package serve

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
)

// requestFields are the names a refusal may start with (invariant 5).
var requestFields = []string{"files", "weights", "stream", "at least one stream", "defines_mb_size", "label", "mb", "epoch_size", "epochs",
	"max_minibatches", "randomize", "window_chunks", "window_samples", "chunk_bytes", "chunk_sequences",
	"workers", "rank", "start", "state", "max_errors", "k ", "group_bytes", "config", "worker", "max_batches", "ctf: config"}

// FuzzRequest decodes arbitrary bytes as a SequenceRequest (with
// SequenceGroups' group_bytes and a mixture's weights) and as a GraphRequest and checks them: never a panic, and every refusal is
// InvalidArgument naming a request field.
func FuzzRequest(f *testing.F) {
	start := uint64(3)
	for _, r := range []*pb.SequenceRequest{
		{Files: []string{"a.ctf"}, Streams: []string{"x:2", "y:5:sparse"}, Mb: "4*2:8", Seed: 3},
		{Files: []string{"a.ctf"}, Streams: []string{"x:2"}, WindowSamples: 9, WindowChunks: 2, Start: &start, State: []byte(`{"version":1}`)},
		{Files: []string{"a.ctf"}, Streams: []string{"x:0"}, Workers: 2, Rank: 2, EpochSize: "inf", K: 4, GroupBytes: -1},
		{Files: []string{"a.ctf", "b.parquet"}, Weights: []string{"0.7", "samples:3"}, Streams: []string{"x:2"}},
		{Files: []string{"a.ctf", "b.ctf"}, Weights: []string{"0.000000000000000001", "999999999999999999"}, Streams: []string{"x:2"}},
	} {
		b, _ := proto.Marshal(r)
		f.Add(b)
	}
	b, _ := proto.Marshal(&pb.GraphRequest{Config: "g.toml", Worker: 1, State: []byte("{}")})
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		var sr pb.SequenceRequest
		if proto.Unmarshal(data, &sr) == nil {
			if _, err := checkSequenceRequest(&sr); err != nil {
				checkRefusal(t, err)
			}
			if _, err := groupBytes(sr.GroupBytes); err != nil {
				checkRefusal(t, err)
			}
		}
		var gr pb.GraphRequest
		if proto.Unmarshal(data, &gr) == nil {
			if _, err := checkGraphRequest(&gr); err != nil {
				checkRefusal(t, err)
			}
		}
	})
}

func checkRefusal(t *testing.T, err error) {
	s, ok := status.FromError(err)
	if !ok || s.Code() != codes.InvalidArgument {
		t.Fatalf("refusal %v: want InvalidArgument", err)
	}
	for _, f := range requestFields {
		if strings.HasPrefix(s.Message(), f) {
			return
		}
	}
	t.Fatalf("refusal %q names no request field", s.Message())
}
