package randomize

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current code")

// goldenCase is one pinned order: a layout, a config, the sweeps to print.
type goldenCase struct {
	name   string
	layout *corpus.Layout
	cfg    Config
	sweeps []uint64
}

// goldenText renders the orders of every case, one line per sweep.
func goldenText(t *testing.T, header string, cases []goldenCase) string {
	var b strings.Builder
	b.WriteString(header)
	for _, c := range cases {
		rz := mustNew(t, c.cfg, c.layout)
		fmt.Fprintf(&b, "\n# %s: chunks %v samples %v kind %s seed %d window_chunks %d window_samples %d\n",
			c.name, c.layout.ChunkStart, c.layout.Samples, c.cfg.Kind, c.cfg.Seed, c.cfg.WindowChunks, c.cfg.WindowSamples)
		for _, s := range c.sweeps {
			fmt.Fprintf(&b, "%s sweep %d:", c.name, s)
			for _, q := range walk(t, rz, c.layout, s) {
				fmt.Fprintf(&b, " %d", q)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// checkGolden compares text with testdata/name, or rewrites the file with
// -update.
func checkGolden(t *testing.T, name, text string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (generate it with go test -run %s -update)", err, t.Name())
	}
	if string(want) != text {
		t.Fatalf("order differs from %s: an order every user depends on changed.\n got:\n%s\nwant:\n%s", path, text, want)
	}
}

const goldenHeader = "# Pinned orders: do not edit; regenerate only with go test -update, and only\n# for an intended, documented change of the order.\n"
