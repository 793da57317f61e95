package edgestore

import (
	"bytes"
	"strings"
	"testing"
)

func sampleEdgeManifest() EdgeManifest {
	m := EdgeManifest{Format: edgeFormat, Version: Version, StorageFingerprint: "fp", EntitiesID: "id",
		Partitions: [2]int{1, 2}, Weights: false, Columns: Columns(false), Source: "x.tsv", Edges: 3}
	for r := 0; r < 2; r++ {
		n := int64(r + 1)
		_, size := layout(n, false)
		m.Buckets = append(m.Buckets, BucketManifest{Lhs: 0, Rhs: r, File: BucketFile(0, r), Edges: n, Bytes: size,
			CRC32C: map[string]uint32{"lhs": 1, "rhs": 2, "rel": 3, "ordinal": 4}})
	}
	return m
}

// Invariants 1 and 3: manifests round-trip; damage, unknown fields and
// other versions are refused.
func TestEdgeManifest(t *testing.T) {
	b := encodeManifest(sampleEdgeManifest())
	m, err := DecodeEdgeManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Edges != 3 || len(m.Buckets) != 2 || m.Buckets[1].CRC32C["rel"] != 3 {
		t.Fatalf("decoded %+v", m)
	}
	d := bytes.Replace(b, []byte(`"x.tsv"`), []byte(`"y.tsv"`), 1)
	if _, err := DecodeEdgeManifest(d); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("edited manifest: %v", err)
	}
	bad := []func(*EdgeManifest){
		func(m *EdgeManifest) { m.Version = 2 },
		func(m *EdgeManifest) { m.Format = "other" },
		func(m *EdgeManifest) { m.Edges = 4 },
		func(m *EdgeManifest) { m.Buckets = m.Buckets[:1] },
		func(m *EdgeManifest) { m.Buckets[0].Bytes++ },
		func(m *EdgeManifest) { m.Buckets[1].Rhs = 0 },
		func(m *EdgeManifest) { m.Buckets[0].File = "../x" },
		func(m *EdgeManifest) { delete(m.Buckets[0].CRC32C, "rel") },
		func(m *EdgeManifest) { m.Columns = Columns(true) },
		func(m *EdgeManifest) { m.Partitions = [2]int{0, 2} },
	}
	for i, edit := range bad {
		m := sampleEdgeManifest()
		edit(&m)
		if _, err := DecodeEdgeManifest(encodeManifest(m)); err == nil {
			t.Errorf("bad manifest %d accepted", i)
		}
	}
	if _, err := DecodeEdgeManifest([]byte(`{"body": {"format": "batchprep-edge-set", "extra": 1}, "crc32c": 0}`)); err == nil {
		t.Error("unknown field accepted")
	}
}

func FuzzDecodeManifest(f *testing.F) {
	f.Add(encodeManifest(sampleEdgeManifest()))
	f.Add(encodeManifest(EntityManifest{Format: entityFormat, Version: Version, Entities: map[string][]int64{"n": {1}},
		Files: []FileManifest{{Name: countFile("n", 0)}, {Name: namesFile("n", 0)}, {Name: relNamesFile}}}))
	f.Add([]byte(`{"body":{},"crc32c":0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := DecodeEdgeManifest(b); err == nil {
			// An accepted manifest is self-consistent and re-encodes.
			if _, err := DecodeEdgeManifest(encodeManifest(m)); err != nil {
				t.Fatalf("re-encoded edge manifest refused: %v", err)
			}
		}
		if m, err := DecodeEntityManifest(b); err == nil {
			if _, err := DecodeEntityManifest(encodeManifest(m)); err != nil {
				t.Fatalf("re-encoded entity manifest refused: %v", err)
			}
		}
	})
}
