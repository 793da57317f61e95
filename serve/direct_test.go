package serve_test

import (
	"testing"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// TestDirectReads: a server reading its corpus around the page cache (as
// it does a corpus larger than memory; BATCHPREP_DIRECT_READS=on here)
// streams what it streams through the page cache, in file and window
// order and in a mixture.
func TestDirectReads(t *testing.T) {
	a, b := writeCorpus(t, 400), writeCorpusB(t, 150, nil)
	reqs := map[string]*pb.SequenceRequest{
		"window": {Files: []string{a}, Streams: corpusStreams, Mb: "16", Seed: 5, WindowChunks: 3, ChunkSequences: 7},
		"none":   {Files: []string{a}, Streams: corpusStreams, Mb: "16", Randomize: "none", ChunkSequences: 7},
		"mixture": {Files: []string{a, b}, Weights: []string{"0.3", "0.7"}, Streams: corpusStreams, Mb: "16", Seed: 2,
			WindowChunks: 2, ChunkSequences: 5},
	}
	want := map[string][]*pb.SequenceMinibatch{}
	t.Setenv("BATCHPREP_DIRECT_READS", "off")
	_, conn, _ := startServer(t, serve.Options{})
	for name, req := range reqs {
		want[name] = collect(t, conn, req)
	}
	t.Setenv("BATCHPREP_DIRECT_READS", "on")
	_, conn, _ = startServer(t, serve.Options{})
	for name, req := range reqs {
		sameStream(t, name, collect(t, conn, req), want[name])
	}
}
