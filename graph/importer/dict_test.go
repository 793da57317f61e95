package importer

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The dictionary agrees with a Go map on names of every length, including
// names that differ only by trailing zero bytes or after the 8-byte prefix,
// across table growth and a reserve.
func TestDictAgreesWithMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	d := newDict("n")
	ref := map[string]uint32{}
	alphabet := []byte("ab\x00")
	for i := 0; i < 200000; i++ {
		if i == 1000 {
			d.reserve(50000) // as the importer does after its first block
		}
		n := 1 + r.IntN(20)
		b := make([]byte, n)
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		if r.IntN(3) == 0 {
			b = []byte(fmt.Sprintf("long-shared-prefix-%d", r.IntN(5000)))
		}
		id, ok, h := d.lookup(b)
		want, wok := ref[string(b)]
		if ok != wok || (ok && id != want) {
			t.Fatalf("%q: got %d,%v want %d,%v", b, id, ok, want, wok)
		}
		if !ok {
			ref[string(b)] = d.add(b, h)
		}
	}
	if len(d.names) != len(ref) {
		t.Fatalf("%d names, want %d", len(d.names), len(ref))
	}
	for name, id := range ref {
		if d.names[id] != name {
			t.Fatalf("names[%d] = %q, want %q", id, d.names[id], name)
		}
	}
}
