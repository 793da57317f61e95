package importer

import (
	"context"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// preResolveEdge is row i of TestParquetPreResolveRowOrder: row group 0
// (rows 0-399) names o0-o199 and old-long-name-0-29 (past 8 bytes, which
// readers compare with the names array); row group 1 adds p0-p119 and
// long names; row group 2 mixes names
// of row group 0, names row group 1 added, and new names (q...), some on
// both sides of a row, in an order that is not the order of either
// column's dictionary.
func preResolveEdge(i int) pqDictEdge {
	s := func(f string, a ...any) *string { x := fmt.Sprintf(f, a...); return &x }
	var src, dst *string
	switch {
	case i < 400:
		src, dst = s("o%d", i%150), s("o%d", (i*7)%200)
		if i%5 == 0 {
			dst = s("old-long-name-%d", i%30)
		}
	case i < 800:
		src, dst = s("p%d", i%100), s("p%d", (i*3)%120)
		if i%2 == 1 {
			src = s("o%d", i%200)
		}
		if i%3 == 0 {
			dst = s("long-new-name-%d", i%50)
		}
	default:
		names := []*string{s("p%d", (i*5)%120), s("q%d", (i*11)%90), s("o%d", (i*13)%200), s("long-new-name-%d", i%60), s("q-long-name-%d", (i*7)%40), s("old-long-name-%d", i%35)}
		src, dst = names[i%6], names[(i/6)%6]
		if i%7 == 0 {
			dst = src
		}
	}
	return pqDictEdge{src, []string{"a", "b", "c"}[i%3], dst}
}

// Invariants 1 and 4 with pass A looking the values of each row group's
// dictionaries up in the entity dictionary while pass B adds names to it
// (dict_shared.go). Here row group 2 is decoded, and its values looked
// up, after pass B is done with row group 0 but before row group 1 is
// even decoded: row group 1 then adds names that row group 2 also holds,
// after row group 2's values were looked up. The store must be the text
// import's: ids in first appearance order, every name once. (This fails
// if pass A gave ids to the names it did not find, or if pass B took a
// name pass A did not find for a new one.)
func TestParquetPreResolveRowOrder(t *testing.T) {
	const rows = 1200
	var text strings.Builder
	var pq []pqDictEdge
	for i := range rows {
		e := preResolveEdge(i)
		pq = append(pq, e)
		fmt.Fprintf(&text, "%s\t%s\t%s\n", *e.Src, e.Rel, *e.Dst)
	}
	var snaps []map[string][]byte
	for _, format := range []string{"tsv", "parquet"} {
		dir := t.TempDir()
		c := dictConfigTypes(t, dir, 1, 1)
		in := filepath.Join(dir, "in."+format)
		o := DefaultOptions()
		o.RelCol = 1
		if format == "tsv" {
			if err := os.WriteFile(in, []byte(text.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			writePQOpts(t, in, pq, parquet.MaxRowsPerRowGroup(400), parquet.PageBufferSize(512))
			o.pqWorkers = 3
			o.pqHook = orderHook(t, [][2]string{{"2 start", "0 flushed"}, {"1 start", "2 filled"}})
		}
		rep, err := Import(context.Background(), c, o, []string{in})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if rep.EdgeSets[0].Edges != rows || rep.Skipped != 0 {
			t.Fatalf("%s: %+v", format, rep.EdgeSets[0])
		}
		snaps = append(snaps, snapshot(t, c, in))
	}
	sameStores(t, snaps[0], snaps[1])
}

// orderHook returns an Options.pqHook that holds each event ("g step") of
// waits[i][0] until the event waits[i][1] has happened.
func orderHook(t *testing.T, waits [][2]string) func(int, string) {
	var mu sync.Mutex
	happened := map[string]chan struct{}{}
	ch := func(ev string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if happened[ev] == nil {
			happened[ev] = make(chan struct{})
		}
		return happened[ev]
	}
	return func(g int, step string) {
		ev := fmt.Sprintf("%d %s", g, step)
		for _, w := range waits {
			if w[0] != ev {
				continue
			}
			select {
			case <-ch(w[1]):
			case <-time.After(20 * time.Second):
				t.Errorf("%q: %q did not happen", ev, w[1])
			}
		}
		close(ch(ev))
	}
}

// Rules 1-4 of dict_shared.go: a reader looking names up while the writer
// adds them (the table growing, the names array moving) finds each name
// with its own id or not at all; -race checks the accesses.
func TestDictSharedReads(t *testing.T) {
	const n = 20000
	d := newDict("n")
	name := func(i int) []byte {
		if i%2 == 0 {
			return fmt.Appendf(nil, "n%d", i) // short: tag and prefix compared
		}
		return fmt.Appendf(nil, "a-long-name-%d", i) // compared with names
	}
	done := make(chan struct{})
	var found int
	go func() {
		defer close(done)
		for round := 0; round < 50; round++ {
			tab := d.pub.Load()
			for i := 0; i < n; i += 7 {
				b := name(i)
				h := maphash.Bytes(d.seed, b)
				if id1 := d.lookupShared(tab, b, h, prefix(b)); id1 != 0 {
					found++
					if id1-1 != uint32(i) {
						t.Errorf("%s found with id %d", b, id1-1)
						return
					}
				}
			}
		}
	}()
	for i := range n {
		b := name(i)
		if _, ok, h := d.lookup(b); !ok {
			d.add(b, h)
		}
	}
	<-done
	if d.grows == 0 {
		t.Fatal("the table never grew")
	}
	// A long name whose tag and prefix match another's is told apart by
	// its bytes.
	a, b := name(1), name(3)
	ha := maphash.Bytes(d.seed, a)
	if got := d.lookupShared(d.pub.Load(), b, ha, prefix(b)); got != 0 {
		t.Errorf("%s with the hash of %s: id %d", b, a, got-1)
	}
	t.Logf("%d of the reader's lookups found their name", found)
}
