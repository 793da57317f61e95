package randomize

import (
	"fmt"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/golden"
)

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

// checkGolden compares text with testdata/name (-update rewrites it).
func checkGolden(t *testing.T, name, text string) {
	t.Helper()
	golden.Check(t, name, text)
}

const goldenHeader = "# Pinned orders: do not edit; regenerate only with go test -update, and only\n# for an intended, documented change of the order.\n"
