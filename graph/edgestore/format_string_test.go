package edgestore

import (
	"fmt"
	"testing"
)

// Messages show a header and a manifest entry in words, never as Go struct
// syntax, whatever verb formats them.
func TestStrings(t *testing.T) {
	h := Header{Weights: true, Edges: 12, Lhs: 1, Rhs: 2}
	f := FileManifest{Name: "b_1_2.bin", Bytes: 100, CRC32C: 7}
	for _, verb := range []string{"%v", "%+v"} {
		if got, want := fmt.Sprintf(verb, h), "(12 edges, weights true, bucket (1,2))"; got != want {
			t.Errorf("header %s: %q, want %q", verb, got, want)
		}
		if got, want := fmt.Sprintf(verb, f), `(name "b_1_2.bin", 100 bytes, crc32c 7)`; got != want {
			t.Errorf("file %s: %q, want %q", verb, got, want)
		}
	}
}
