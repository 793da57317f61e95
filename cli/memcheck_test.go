package cli

import (
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/graph/train"
)

// The memory a chunk's dense rows need is checked against the limit on the
// index, before parsing; the error names the chunk, the need and the limit.
func TestCheckChunkMemory(t *testing.T) {
	l := &corpus.Layout{Samples: []uint32{3, 5, 2}, ChunkStart: []int{0, 2, 3}}
	streams := []corpus.Stream{{Name: "f", Dim: 1 << 20}, {Name: "s", Dim: 1 << 30, Sparse: true}}
	// Chunk 0: 8 samples x 1Mi values x 4 bytes = 32 MiB.
	if err := checkChunkMemory("c.ctf", l, streams, 32<<20); err != nil {
		t.Errorf("32 MiB within a 32 MiB limit: %v", err)
	}
	err := checkChunkMemory("c.ctf", l, streams, 31<<20)
	if err == nil || !strings.Contains(err.Error(), "c.ctf: chunk 0 holds 8 samples") || !strings.Contains(err.Error(), "32 MiB to parse, more than the 31 MiB") {
		t.Errorf("error %v", err)
	}
	if physicalMemory() == 0 {
		t.Log("physical memory unknown here: the check is skipped at run time")
	}
}

// eval and export refuse a run whose estimated memory (entities x
// dimension, and the scratch arrays) is more than the machine has,
// before allocating; the error names the config, the need and the limit.
func TestCheckGraphMemory(t *testing.T) {
	m := train.Memory{Bytes: 3 << 30, Tables: 3<<30 - 1<<20, Work: 1 << 20, Rows: 14_000_000, Dim: 56}
	if err := checkGraphMemory("g.toml", m, 4<<30, evalMemoryHint); err != nil {
		t.Errorf("3 GiB within 4 GiB: %v", err)
	}
	err := checkGraphMemory("g.toml", m, 2<<30, evalMemoryHint)
	want := "g.toml: the run needs about 3072 MiB: 14000000 entity rows of dimension 56"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "more than the 2048 MiB of memory this machine has") {
		t.Errorf("error %v, want %q", err, want)
	}
	if err := checkGraphMemory("g.toml", m, 0, evalMemoryHint); err != nil {
		t.Errorf("unknown memory must not refuse: %v", err)
	}
}
