package ctf

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/source"
)

var _ source.Fingerprinter = (*Reader)(nil)

// fileOf returns a file of n bytes of 1-line sequences "k |a k\n" (the last
// line padded with spaces to reach n exactly).
func fileOf(n int) []byte {
	var b []byte
	for k := 0; ; k++ {
		line := strconv.Itoa(k) + " |a " + strconv.Itoa(k%10) + "\n"
		if len(b)+len(line)+len(line) > n {
			pad := n - len(b) - len(line)
			return append(b, line[:len(line)-1]+spaces(pad)+"\n"...)
		}
		b = append(b, line...)
	}
}

func spaces(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = ' '
	}
	return string(b)
}

// edgesReference hashes the file the way cli/read.go did in round 1.
func edgesReference(data []byte) string {
	const edge = 64 << 10
	h := sha256.New()
	h.Write(data[:min(edge, len(data))])
	if len(data) > edge {
		h.Write(data[len(data)-min(edge, len(data)-edge):])
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

func fingerprintOf(t *testing.T, path string, cfg Config) map[string]string {
	t.Helper()
	r, err := Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return r.Fingerprint()
}

// Fingerprint: the keys and values of the round-1 `batchprep read` wrapper,
// for files shorter than one edge, between one and two edges, and longer.
func TestFingerprintKeys(t *testing.T) {
	cfg := Config{Streams: []corpus.Stream{dense("a", 1)}}
	for _, n := range []int{100, 70 << 10, 128 << 10, 300 << 10} {
		data := fileOf(n)
		if len(data) != n {
			t.Fatalf("fileOf(%d) gave %d bytes", n, len(data))
		}
		p := writeTemp(t, string(data))
		got := fingerprintOf(t, p, cfg)
		want := map[string]string{"file_size": strconv.Itoa(n), "file_edges_sha256": edgesReference(data),
			"defines_mb_size": "", "label": "", "chunking": strconv.Itoa(DefaultChunkBytes) + " bytes"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%d bytes: fingerprint %v, want %v", n, got, want)
		}
	}
}

// Fingerprint changes with the data at either end, the size and every
// layout setting; not with the error budget, the cache settings or the
// file's name.
func TestFingerprintChanges(t *testing.T) {
	streams := []corpus.Stream{dense("a", 1), dense("b", 1)}
	data := fileOf(300 << 10)
	p := writeTemp(t, string(data))
	base := Config{Streams: streams, MaxErrors: 1 << 20}
	ref := fingerprintOf(t, p, base)

	same := func(name string, path string, cfg Config) {
		t.Helper()
		if got := fingerprintOf(t, path, cfg); !reflect.DeepEqual(got, ref) {
			t.Errorf("%s: fingerprint changed: %v, was %v", name, got, ref)
		}
	}
	differs := func(name, key string, path string, cfg Config) {
		t.Helper()
		got := fingerprintOf(t, path, cfg)
		if got[key] == ref[key] {
			t.Errorf("%s: %s unchanged (%q)", name, key, got[key])
		}
	}
	cfg := base
	cfg.MaxErrors = 3
	same("max_errors", p, cfg)
	cfg = base
	cfg.CacheIndex, cfg.CacheDir = true, t.TempDir()
	same("cache", p, cfg)
	cp := filepath.Join(t.TempDir(), "renamed.ctf")
	if err := os.WriteFile(cp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	same("copy", cp, base)

	cfg = base
	cfg.DefinesMBSize = "a"
	differs("defines_mb_size", "defines_mb_size", p, cfg)
	cfg = base
	cfg.Label = "a"
	differs("label", "label", p, cfg)
	cfg = base
	cfg.ChunkBytes = 4096
	differs("chunk_bytes", "chunking", p, cfg)
	cfg = base
	cfg.ChunkSequences = 10
	differs("chunk_sequences", "chunking", p, cfg)
	cfg = base
	cfg.LineMode = true
	differs("line mode", "line_mode", p, cfg)

	for _, at := range []int{10, len(data) - 10} {
		mod := append([]byte(nil), data...)
		mod[at] ^= 1 // the index may change too; the edge hash must
		mp := writeTemp(t, string(mod))
		differs("byte "+strconv.Itoa(at), "file_edges_sha256", mp, base)
	}
	differs("size", "file_size", writeTemp(t, string(data)+"9 |a 1\n"), base)

	// The map is the caller's: changing it changes nothing inside.
	r, err := Open(p, base)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Fingerprint()["label"] = "x"
	if r.Fingerprint()["label"] != "" {
		t.Error("Fingerprint returned the reader's own map")
	}
}
