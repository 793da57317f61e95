package serve_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// TestWindowLimitCountsRealChunks: the window limit counts the text of the
// corpus's own chunks. Chunks cut by chunk_sequences hold a few sequences,
// far from the 32 MiB a chunk cut by size may reach: counting 32 MiB for
// each refused a 3 MB corpus (ATIS) that `batchprep read` reads.
func TestWindowLimitCountsRealChunks(t *testing.T) {
	file := writeCorpus(t, 300)
	_, small, _ := startServer(t, serve.Options{MaxWindowBytes: 16 << 10})
	req := &pb.SequenceRequest{Files: []string{file}, Streams: corpusStreams, Mb: "8", ChunkSequences: 5,
		WindowChunks: 16, MaxMinibatches: 3}
	if msgs, err := collectErr(context.Background(), small, req); err != nil || len(msgs) != 3 {
		t.Fatalf("chunk_sequences 5, window_chunks 16 under a 16 KiB limit: %d minibatches, %v", len(msgs), err)
	}
	// A window past the limit in real bytes is still refused, with them.
	req.ChunkSequences, req.WindowChunks = 100, 16
	msgs, err := collectErr(context.Background(), small, req)
	if s, _ := status.FromError(err); s.Code() != codes.InvalidArgument || len(msgs) != 0 ||
		!strings.Contains(s.Message(), "window_chunks: the randomization window holds up to 3 chunks of this corpus, up to ") {
		t.Fatalf("chunk_sequences 100 (three chunks of the whole corpus): %d minibatches, %v", len(msgs), err)
	}
}
