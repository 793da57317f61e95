package objstore

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"testing"
)

// decodeBlock checks b, the file of a block of want bytes stored under key,
// as a read of the whole block checks it, and returns the block.
func decodeBlock(b []byte, key [32]byte, want int64) ([]byte, error) {
	if want < 0 || int64(len(b)) != want+trailerLen(want) {
		return nil, fmt.Errorf("%w: %d bytes, want %d and the trailer", errBadCacheFile, len(b), want)
	}
	data := make([]byte, want)
	w := where{key: key, n: want}
	if err := checkedRange(bytes.NewReader(b), int64(len(b)), int64(len(b)), 0, w, 0, want, data); err != nil {
		return nil, err
	}
	return data, nil
}

// TestDecodeBlock: invariant 8. A good file decodes; each kind of damage
// is caught.
func TestDecodeBlock(t *testing.T) {
	key := sha256.Sum256([]byte("k"))
	data := []byte("some block bytes")
	file := appendTrailer(append([]byte(nil), data...), key, data)
	got, err := decodeBlock(file, key, int64(len(data)))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("decode: %q, %v", got, err)
	}
	other := sha256.Sum256([]byte("other"))
	flip := append([]byte(nil), file...)
	flip[3] ^= 1
	for name, c := range map[string]struct {
		b    []byte
		key  [32]byte
		want int64
	}{
		"truncated":    {file[:len(file)-1], key, int64(len(data))},
		"tiny":         {file[:5], key, int64(len(data))},
		"bit flip":     {flip, key, int64(len(data))},
		"other key":    {file, other, int64(len(data))},
		"other length": {file, key, int64(len(data)) + 1},
		"empty":        {nil, key, 0},
	} {
		if _, err := decodeBlock(c.b, c.key, c.want); !errors.Is(err, errBadCacheFile) {
			t.Errorf("%s: %v; want errBadCacheFile", name, err)
		}
	}
}

// FuzzDecodeBlock: invariant 8. decodeBlock never panics, and what it
// accepts re-encodes to the same file.
func FuzzDecodeBlock(f *testing.F) {
	key := sha256.Sum256([]byte("k"))
	f.Add(appendTrailer([]byte("abc"), key, []byte("abc")), int64(3))
	f.Add([]byte("short"), int64(0))
	f.Fuzz(func(t *testing.T, b []byte, want int64) {
		data, err := decodeBlock(b, key, want)
		if err != nil {
			return
		}
		if again := appendTrailer(append([]byte(nil), data...), key, data); !bytes.Equal(again, b) {
			t.Fatalf("accepted %x, which re-encodes to %x", b, again)
		}
	})
}

// TestReadRangeChecksItsPieces: invariant 8. A read of part of a cached
// block reads and checks the pieces it covers: damage in another piece
// does not fail it; damage in a piece it covers is caught and the file
// removed.
func TestReadRangeChecksItsPieces(t *testing.T) {
	dir := t.TempDir()
	c := newCache(dir, 1<<30)
	data := make([]byte, 3*pieceLen+100)
	for i := range data {
		data[i] = byte(i * 7)
	}
	k := key(1)
	if err := c.put(k, data); err != nil {
		t.Fatal(err)
	}
	n := int64(len(data))
	for _, r := range [][2]int64{{0, 10}, {pieceLen - 5, pieceLen + 5}, {n - 50, n}, {0, n}} {
		dst := make([]byte, r[1]-r[0])
		if ok, bad := c.readRange(where{key: k, n: n}, r[0], r[1], dst); !ok || bad || !bytes.Equal(dst, data[r[0]:r[1]]) {
			t.Fatalf("range %v: ok %v, bad %v, equal %v", r, ok, bad, bytes.Equal(dst, data[r[0]:r[1]]))
		}
	}
	p := c.path(k)
	file, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	file[2*pieceLen+3] ^= 1 // piece 2
	if err := os.WriteFile(p, file, 0o644); err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 10)
	if ok, bad := c.readRange(where{key: k, n: n}, 0, 10, dst); !ok || bad {
		t.Fatalf("a range in piece 0 of a block damaged in piece 2: ok %v, bad %v", ok, bad)
	}
	if ok, bad := c.readRange(where{key: k, n: n}, 2*pieceLen, 2*pieceLen+10, dst); ok || !bad {
		t.Fatalf("a range in the damaged piece: ok %v, bad %v", ok, bad)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("the damaged file is still there: %v", err)
	}
}
