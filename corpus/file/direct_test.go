package file

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/corpus/source"
)

// TestDirectReadsPolicy: a corpus is read around the page cache when it
// is larger than the machine's memory, or when BATCHPREP_DIRECT_READS
// says so.
func TestDirectReadsPolicy(t *testing.T) {
	mem := memTotal()
	if mem == 0 {
		t.Skip("no /proc/meminfo here: direct reads only when asked for")
	}
	for _, c := range []struct {
		env  string
		size int64
		want bool
	}{{"", mem + 1, true}, {"", mem, false}, {"", 1 << 20, false}, {"on", 1, true}, {"off", mem * 2, false}} {
		t.Setenv("BATCHPREP_DIRECT_READS", c.env)
		if got := DirectReads(c.size); got != c.want {
			t.Errorf("BATCHPREP_DIRECT_READS=%q, %d bytes (memory %d): %v", c.env, c.size, mem, got)
		}
	}
}

// TestDirectReadsSameMinibatches: a CTF corpus read around the page cache
// gives the minibatches read through it gives, in file and window order,
// over two sweeps.
func TestDirectReadsSameMinibatches(t *testing.T) {
	var b bytes.Buffer
	for i := range 20000 {
		for j := range 1 + i%3 {
			fmt.Fprintf(&b, "%d |S0 %d:1 |S1 %d:1", i, (i*7+j)%943, j%26)
			if j == 0 {
				fmt.Fprintf(&b, " |S2 %d:1", i%129)
			}
			b.WriteByte('\n')
		}
	}
	path := filepath.Join(t.TempDir(), "c.ctf")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := ctf.Config{Streams: atisStreams, ChunkBytes: 32 << 10}
	read := func(mode, kind string) ([]string, bool) {
		t.Setenv("BATCHPREP_DIRECT_READS", mode)
		r, err := OpenWith(context.Background(), path, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		c, _ := CTFOf(r)
		return twoEpochs(t, r, source.Config{Randomize: randomize.Config{Kind: kind, Seed: 3, WindowChunks: 16},
			Prefetch: true, PrefetchChunks: 8, Schedule: source.ConstantSchedule(500)}), c.HintAhead() > 0
	}
	for _, kind := range []string{"none", "window"} {
		want, direct := read("off", kind)
		if direct {
			t.Fatal("BATCHPREP_DIRECT_READS=off read around the page cache")
		}
		got, direct := read("on", kind)
		if !direct {
			t.Skip("direct reads refused here: the test needs a file system that takes O_DIRECT")
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s order: the minibatches differ", kind)
		}
	}
}
