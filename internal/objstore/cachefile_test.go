package objstore

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"testing"
)

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
