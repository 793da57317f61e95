package train

import (
	"bytes"
	"encoding/json"
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

// fuzzModel is a small model with two operator vectors and a global
// embedding, the layout FuzzDecodeModel decodes into.
func fuzzModel(t testing.TB) *model.Model {
	op, err := model.NewOperator("diagonal", 3)
	if err != nil {
		t.Fatal(err)
	}
	op2, _ := model.NewOperator("translation", 3)
	m, err := model.New(model.Settings{Dim: 3, Comparator: "dot", Loss: "ranking", Lr: 0.1, RelationLr: 0.1, GlobalEmb: true},
		[]model.Relation{{Op: op, Weight: 1}, {Op: op2, Weight: 1}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Model files: decoding never panics; a file that decodes into the
// model's layout passes the layout-free check verify makes, and encodes
// back to the same bytes.
func FuzzDecodeModel(f *testing.F) {
	good := encodeModel(fuzzModel(f))
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add([]byte(modelMagic + "\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		structural := checkModelFile(b)
		m := fuzzModel(t)
		if err := decodeModelInto(b, m); err != nil {
			return
		}
		if structural != nil {
			t.Fatalf("decoded, but verify's check refuses it: %v", structural)
		}
		if !bytes.Equal(encodeModel(m), b) {
			t.Fatal("re-encoding differs")
		}
	})
}

// Training logs: CheckLog never panics, and accepts only newline-ended
// lines, each a JSON object.
func FuzzCheckLog(f *testing.F) {
	f.Add([]byte(`{"epoch":0,"edge_set":0,"chunk":0,"index":0,"edges":5,"loss":0.5}` + "\n"))
	f.Add([]byte(`{"epoch":0,"edge_set":0,"chunk":0,"index":1,"edges":5,"loss":0.5}` + "\n" + `{"epoch":0,"edge_set":0,"chunk":0,"index":0,"edges":5,"loss":0.5}` + "\n"))
	f.Add([]byte("{\"epoch\":0}\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), LogName)
		os.WriteFile(path, b, 0o644)
		if err := CheckLog(path, &Manifest{Buckets: 1 << 20}); err != nil {
			return
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			t.Fatal("accepted a log whose last line has no newline")
		}
		for _, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
			if len(b) > 0 && !json.Valid(l) {
				t.Fatalf("accepted line %q", l)
			}
		}
	})
}
