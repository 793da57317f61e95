package train

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/batchprep/batchprep/graph/train/model"
)

// Table files round-trip; any other bytes decode to an error or to a
// table that encodes back to the same bytes.
func FuzzDecodeTable(f *testing.F) {
	f.Add(encodeTable(model.NewTable(3, 2, 1, rand.New(rand.NewPCG(1, 1)))))
	f.Add([]byte(tableMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		tab, err := decodeTable(b)
		if err != nil {
			return
		}
		if !bytes.Equal(encodeTable(tab), b) {
			t.Fatal("re-encoding differs")
		}
	})
}

// Manifests: anything but a well-formed, checksummed manifest of this
// version is an error, never a panic.
func FuzzReadManifest(f *testing.F) {
	dir := f.TempDir()
	if err := writeManifest(dir, &Manifest{Version: ManifestVersion, Seq: 3}); err != nil {
		f.Fatal(err)
	}
	good, _ := os.ReadFile(filepath.Join(dir, ManifestName))
	f.Add(good)
	f.Add([]byte(`{"body":{},"sha256":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, ManifestName), b, 0o644)
		m, err := ReadManifest(d)
		if err == nil && (m == nil || m.Version != ManifestVersion) {
			t.Fatalf("accepted %v", m)
		}
	})
}
