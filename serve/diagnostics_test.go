package serve_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/cli"
	pb "github.com/batchprep/batchprep/proto/batchpreppb"
	"github.com/batchprep/batchprep/serve"
)

// readDiagnostics runs the real `batchprep read` and returns the
// diagnostics it prints on stderr, without its prefix and summary lines.
func readDiagnostics(t *testing.T, args ...string) []string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := cli.Main(append([]string{"read", "--quiet", "--format", "summary"}, args...), nil, &out, &errOut); code != 0 {
		t.Fatalf("read %v: exit %d: %s", args, code, errOut.String())
	}
	var d []string
	for _, l := range strings.Split(strings.TrimSpace(errOut.String()), "\n") {
		l = strings.TrimPrefix(l, "batchprep read: ")
		if strings.Contains(l, ".ctf:") {
			d = append(d, l)
		}
	}
	return d
}

// TestWarnings: the reader's diagnostics of a call (an unconfigured stream,
// skipped bad sequences) travel in SequenceMinibatch.warnings, in the words
// of `batchprep read`, each once; past 20 one line says the rest are not
// sent.
func TestWarnings(t *testing.T) {
	_, conn, _ := startServer(t, serve.Options{})
	path := writeCorpusBad(t, 40, func(i int) bool { return i%10 == 3 })
	req := &pb.SequenceRequest{Files: []string{path}, Streams: []string{"x:2", "y:7:sparse"}, Mb: "9",
		MaxErrors: 10, ChunkSequences: 20}
	var got []string
	for _, m := range collect(t, conn, req) {
		got = append(got, m.Warnings...)
	}
	want := readDiagnostics(t, path, "--stream", "x:2", "--stream", "y:7:sparse", "--mb", "9",
		"--max-errors", "10", "--chunk-sequences", "20")
	if len(want) != 6 { // z unconfigured in each of 2 chunks, 4 bad sequences
		t.Fatalf("read printed %d diagnostics, want 6: %q", len(want), want)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("warnings sent:\n%s\nread prints:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	req.ChunkSequences, req.MaxErrors = 2, 100
	got = nil
	for _, m := range collect(t, conn, req) {
		got = append(got, m.Warnings...)
	}
	if len(got) != 21 || !strings.Contains(got[20], "more than 20 diagnostics") {
		t.Fatalf("%d warnings, want 20 and a last line on the rest: %q", len(got), got)
	}
}
