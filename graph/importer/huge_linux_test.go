package importer

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// adviseHuge marks a large table's memory for huge pages: the kernel lists
// the mapping that holds it with the "hg" flag (MADV_HUGEPAGE).
func TestAdviseHugeMarksTheMapping(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("this kernel has no transparent huge pages")
	}
	s := make([]slot, 2*hugeMin/int(unsafe.Sizeof(slot{})))
	adviseHuge(s)
	addr := uintptr(unsafe.Pointer(&s[len(s)/2]))
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inside := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if f := strings.Fields(line); len(f) >= 5 && strings.Contains(f[0], "-") { // a mapping's header
			if n, _ := fmt.Sscanf(f[0], "%x-%x", &lo, &hi); n == 2 {
				inside = lo <= addr && addr < hi
			}
			continue
		}
		if inside && strings.HasPrefix(line, "VmFlags:") {
			if !strings.Contains(line+" ", " hg ") {
				t.Fatalf("the table's mapping is not marked for huge pages: %s", line)
			}
			return
		}
	}
	t.Fatal("the table's mapping is not in /proc/self/smaps")
}
