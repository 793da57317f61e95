package pqlz4

import (
	"bytes"
	"testing"
)

// FuzzDecode: whatever the bytes and the declared size, Decode returns a
// block or ErrDamaged, never panics, never writes past the declared size,
// and never grows its output past what a block of that length can stand
// for; what an encoded input decodes to is the input.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"", "a", "hello hello hello hello", string(make([]byte, 3000))} {
		enc, err := Codec{}.Encode(nil, []byte(s))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc, len(s), []byte(s))
	}
	f.Add([]byte{0xf0, 0xff, 0xff, 0xff}, 0, []byte(nil))
	f.Fuzz(func(t *testing.T, src []byte, size int, plain []byte) {
		if size < 0 || size > 1<<20 {
			return
		}
		dst := make([]byte, size)
		got, err := Codec{}.Decode(dst, src)
		switch {
		case err != nil:
			return
		case size > 0 && len(got) > size:
			t.Fatalf("%d bytes out of a block declared as %d", len(got), size)
		case size == 0 && len(got) > maxRatio*len(src)+64:
			t.Fatalf("%d bytes out of a %d-byte block", len(got), len(src))
		}
		enc, err := Codec{}.Encode(nil, plain)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Codec{}.Decode(make([]byte, len(plain)), enc)
		if err != nil || !bytes.Equal(back, plain) {
			t.Fatalf("round trip of %d bytes: %v", len(plain), err)
		}
	})
}
