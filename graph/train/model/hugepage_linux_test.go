package model

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// thpMode returns the system's transparent huge page mode ("always",
// "madvise" or "never"), or "" when the kernel has none.
func thpMode() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return ""
}

// hugeKiB returns the AnonHugePages (KiB) of the mapping of
// /proc/self/smaps that holds address p.
func hugeKiB(t testing.TB, p unsafe.Pointer) int {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	addr := uint64(uintptr(p))
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uint64
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 && !strings.Contains(line[:strings.IndexByte(line, ' ')], ":") {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "AnonHugePages:") {
			kib, err := strconv.Atoi(strings.Fields(line)[1])
			if err != nil {
				t.Fatalf("smaps: %q", line)
			}
			return kib
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("no mapping in /proc/self/smaps holds %#x", addr)
	return 0
}

// alignedInside returns the first 2 MiB-aligned address inside v.
func alignedInside(v []float32) unsafe.Pointer {
	p := unsafe.Pointer(unsafe.SliceData(v))
	return unsafe.Add(p, (hugePageSize-uintptr(p)%hugePageSize)%hugePageSize)
}

// TestTableHugePages: a large table's embeddings lie on transparent huge
// pages once written when the system grants them on request (THP mode
// "madvise"), and on small pages with the memory hints off (invariant 8's
// hints; that they change no value is TestPrefetchChangesNothing's and
// graph/train's determinism tests' part).
func TestTableHugePages(t *testing.T) {
	if mode := thpMode(); mode != "madvise" {
		t.Skipf("transparent huge pages are %q here: the test needs \"madvise\", where only advised memory gets them", mode)
	}
	const rows, dim = 1 << 16, 128 // 32 MiB of embeddings
	var keep []*Table              // the first table stays, so the second cannot reuse its memory
	defer runtime.KeepAlive(&keep)
	for _, on := range []bool{true, false} {
		was := SetMemoryHints(on)
		tab := MakeTable(rows, dim)
		SetMemoryHints(was)
		keep = append(keep, tab)
		for i := range tab.Emb {
			tab.Emb[i] = 1
		}
		got := hugeKiB(t, alignedInside(tab.Emb))
		switch {
		case on && got == 0:
			t.Errorf("huge pages on: the table's mapping has no AnonHugePages")
		case !on && got != 0:
			t.Errorf("huge pages off: the table's mapping has %d KiB of AnonHugePages", got)
		}
	}
}
