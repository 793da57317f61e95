package edgestore

import (
	"errors"
	"strings"
	"testing"
)

// A corrupt error wrapped again on its way up says "corrupt data" once and
// still unwraps to ErrCorrupt.
func TestCorruptSaidOnce(t *testing.T) {
	inner := corrupt("f.bin", errors.New("column lhs checksum mismatch"))
	outer := corrupt("f.bin", inner)
	for _, err := range []error{inner, outer} {
		if n := strings.Count(err.Error(), ErrCorrupt.Error()); n != 1 {
			t.Errorf("%q says %q %d times", err, ErrCorrupt, n)
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q does not unwrap to ErrCorrupt", err)
		}
	}
}
