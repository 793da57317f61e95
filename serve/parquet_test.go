package serve_test

import (
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/batchprep/batchprep/cli"
	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// parquetCorpus converts writeCorpus's CTF corpus to Parquet with the real
// `batchprep convert`, in row groups of 20 sequences.
func parquetCorpus(t *testing.T, n int) string {
	t.Helper()
	in := writeCorpus(t, n)
	out := filepath.Join(t.TempDir(), "corpus.parquet")
	var o, e strings.Builder
	args := []string{"convert", in, out, "--row-group-rows", "20"}
	for _, s := range corpusStreams {
		args = append(args, "--stream", s)
	}
	if code := cli.Main(args, nil, &o, &e); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, e.String())
	}
	return out
}

// TestContractParquet: invariant 1 on a Parquet corpus: the server's
// minibatches are `batchprep read`'s on the same file, for every case of
// TestContract, and carry the data the CTF corpus holds.
func TestContractParquet(t *testing.T) {
	checkContract(t, parquetCorpus(t, 53))
}

// TestParquetBadRequest: a stream the Parquet file lacks is refused with
// the column named, and no file contents.
func TestParquetBadRequest(t *testing.T) {
	file := parquetCorpus(t, 10)
	_, conn, _ := startServer(t, serve.Options{})
	_, err := collectErr(t.Context(), conn, &pb.SequenceRequest{Files: []string{file}, Streams: []string{"w:3"}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "column w") {
		t.Fatalf("error %v, want InvalidArgument naming column w", err)
	}
}
