package ctf

import (
	"fmt"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/golden"
	"github.com/batchprep/batchprep/internal/shared"
)

// The diagnostics of invalid_inputs.txt (CNTK's own catalogue of bad input),
// in the order they are reported, pinned to a golden file. Regenerate only
// with -update, after checking the difference.
func TestGoldenInvalidInputsDiagnostics(t *testing.T) {
	path := shared.Need(t, "ctf/reader_tests/Data/invalid_inputs.txt")
	var b strings.Builder
	cfg := Config{Streams: []corpus.Stream{dense("A", 1), sparse("B", 10)}, MaxErrors: 100,
		Warn: func(e Error) {
			fmt.Fprintf(&b, "%d:%d @%d %s: %s\n", e.Line, e.Col, e.Offset, Kind(&e), e.Msg)
		}}
	r, err := Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, ch := range loadAll(t, r) {
		for i, bad := range ch.Bad {
			fmt.Fprintf(&b, "sequence %s: bad=%v\n", ch.IDs[i], bad != nil)
		}
	}
	golden.Check(t, "invalid_inputs.diagnostics.golden", b.String())
}
