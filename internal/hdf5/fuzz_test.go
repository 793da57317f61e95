package hdf5

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen reads arbitrary bytes as an HDF5 file (invariant 4): errors
// are fine, panics and runaway allocations are not.
func FuzzOpen(f *testing.F) {
	for _, name := range []string{"default.h5", "tracked.h5", "chunked.h5", "latest.h5", "many.h5"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	var buf bytes.Buffer
	sample().WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		walkAll(h)
	})
}
