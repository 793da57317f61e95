package ctf

import (
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// FuzzParseStreamFlag: the --stream parser never panics; a value it accepts
// formats back (FormatStreamFlag) to a value that parses to the same stream;
// a dense dimension it accepts is refused by Validate past MaxDenseDim
// rather than allocated.
func FuzzParseStreamFlag(f *testing.F) {
	for _, s := range []string{"x:3", "S0:943:sparse", "x:99999999999", "x:0", ":1", "x:1:dense", "a:b:c:d", "x:9223372036854775807:sparse"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseStreamFlag(s)
		if err != nil {
			return
		}
		back, err := ParseStreamFlag(FormatStreamFlag(st))
		if err != nil || back != st {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, st, FormatStreamFlag(st), back, err)
		}
		c := Config{Streams: []corpus.Stream{st}}
		if err := c.Validate(); err == nil && !st.Sparse && st.Dim > MaxDenseDim {
			t.Fatalf("dense dim %d past the limit accepted", st.Dim)
		}
	})
}
