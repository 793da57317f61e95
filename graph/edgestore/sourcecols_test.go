package edgestore

import (
	"bytes"
	"reflect"
	"testing"
)

// An edge manifest may record how its file was read (source_columns); a
// manifest without the record (every store imported before it existed)
// is written and read as before, with no such key, and decodes to nil.
// Records out of range are refused as damage.
func TestSourceColumnsRecord(t *testing.T) {
	old := sampleEdgeManifest()
	b := encodeManifest(old)
	if bytes.Contains(b, []byte("source_columns")) {
		t.Fatalf("a manifest without the record names it:\n%s", b)
	}
	m, err := DecodeEdgeManifest(b)
	if err != nil || m.SourceColumns != nil {
		t.Fatalf("manifest without the record: %+v, %v", m.SourceColumns, err)
	}
	rec := sampleEdgeManifest()
	rec.SourceColumns = &SourceColumns{Lhs: 0, Rel: 1, Rhs: 2, Delimiter: "comma"}
	m, err = DecodeEdgeManifest(encodeManifest(rec))
	if err != nil || !reflect.DeepEqual(m.SourceColumns, rec.SourceColumns) {
		t.Fatalf("record did not round-trip: %+v, %v", m.SourceColumns, err)
	}
	for _, bad := range []SourceColumns{{Lhs: -1, Rel: 1, Rhs: 2, Delimiter: "tab"}, {Lhs: 0, Rel: -2, Rhs: 2, Delimiter: "tab"},
		{Lhs: 0, Rel: 1, Rhs: 2, Delimiter: "pipe"}, {Lhs: 0, Rel: 1, Rhs: 2}} {
		m := sampleEdgeManifest()
		m.SourceColumns = &bad
		if _, err := DecodeEdgeManifest(encodeManifest(m)); err == nil {
			t.Errorf("source_columns %+v accepted", bad)
		}
	}
	c := testConfig(t, t.TempDir(), 1, 1)
	w, err := Create(c, WriteOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.SetSourceColumns(0, SourceColumns{Delimiter: "tab"}); err == nil {
		t.Error("SetSourceColumns before EdgeSet accepted")
	}
	if err := w.EdgeSet(0, "in.tsv", false); err != nil {
		t.Fatal(err)
	}
	if err := w.SetSourceColumns(0, SourceColumns{Lhs: 0, Rel: 1, Rhs: 2, Delimiter: "semicolon"}); err == nil {
		t.Error("SetSourceColumns with a bad delimiter accepted")
	}
}
