package train

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/batchprep/batchprep/graph/train/model"
)

// TestReadTableHugePages: a large table read back from a checkpoint file,
// streamed (readTable) or whole (decodeTable), lies on transparent huge
// pages, as one model.NewTable makes, when the system grants them on
// request (THP mode "madvise"), so that training resumed from a
// checkpoint runs as fast as training from scratch.
func TestReadTableHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !strings.Contains(string(mode), "[madvise]") {
		t.Skipf("transparent huge pages are not in mode madvise here (%q): only there does advised memory alone get them", strings.TrimSpace(string(mode)))
	}
	defer model.SetMemoryHints(model.SetMemoryHints(true))
	src := model.NewTable(1<<16, 128, 0.1, rand.New(rand.NewPCG(1, 2))) // 32 MiB
	// src stays, so that the tables read cannot reuse its advised memory.
	defer runtime.KeepAlive(src)
	file := encodeTable(src)
	streamed, err := readTable(bytes.NewReader(file), int64(len(file)), model.MakeTable)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := decodeTable(file)
	if err != nil {
		t.Fatal(err)
	}
	for name, tab := range map[string]*model.Table{"readTable": streamed, "decodeTable": whole} {
		if kib := anonHugeKiB(t, tab.Emb); kib == 0 {
			t.Errorf("%s: the table's embeddings have no AnonHugePages", name)
		}
	}
}

// anonHugeKiB returns the AnonHugePages (KiB) of the mapping of
// /proc/self/smaps that holds v's first 2 MiB-aligned byte.
func anonHugeKiB(t *testing.T, v []float32) int {
	const huge = 2 << 20
	p := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
	addr := uint64(p + (huge-p%huge)%huge)
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		var lo, hi uint64
		if f := strings.Fields(line); len(f) > 0 && strings.Count(f[0], "-") == 1 && !strings.HasSuffix(f[0], ":") {
			if n, _ := fmt.Sscanf(f[0], "%x-%x", &lo, &hi); n == 2 {
				in = lo <= addr && addr < hi
				continue
			}
		}
		if f := strings.Fields(line); in && len(f) >= 2 && f[0] == "AnonHugePages:" {
			kib, _ := strconv.Atoi(f[1])
			return kib
		}
	}
	t.Fatalf("no mapping in /proc/self/smaps holds %#x", addr)
	return 0
}
