package export

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"testing"
)

func sample() []Type {
	return []Type{
		{Name: "node", Names: []string{"a", "bé"}, Dim: 3, Emb: []float32{1, -2.5, 1e-7, 0.1, 3, 4}},
		{Name: "user", Names: []string{}, Dim: 3},
	}
}

// Invariant 2: binary round trip; any flipped byte or truncation is an
// error.
func TestBinaryRoundTrip(t *testing.T) {
	b := Encode(sample())
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got[0]) != fmt.Sprint(sample()[0]) || got[1].Name != "user" || len(got[1].Names) != 0 {
		t.Fatalf("round trip: %v", got)
	}
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 0x10
		if _, err := Decode(c); !errors.Is(err, ErrFormat) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	for n := 0; n < len(b); n++ {
		if _, err := Decode(b[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
	}
}

// Invariant 1: TSV lines parse back to the same float32 values.
func TestTSV(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTSV(&buf, sample()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "node\tbé\t") {
		t.Fatalf("lines: %q", lines)
	}
	for i, l := range lines {
		f := strings.Split(l, "\t")
		for k, s := range f[2:] {
			v, err := strconv.ParseFloat(s, 32)
			if err != nil || float32(v) != sample()[0].Emb[i*3+k] {
				t.Fatalf("line %d value %d: %q", i, k, s)
			}
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(sample()))
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		types, err := Decode(b)
		if err != nil {
			return
		}
		if again, err := Decode(Encode(types)); err != nil || fmt.Sprint(again) != fmt.Sprint(types) {
			t.Fatalf("re-encoding differs: %v", err)
		}
	})
}

// FuzzDecodeBody explores the layout behind the checksum: the fuzzed bytes
// get a correct CRC-32C appended, so Decode parses them; it never panics,
// allocates no more than the file can hold, and what it accepts encodes
// back to the same bytes.
func FuzzDecodeBody(f *testing.F) {
	good := Encode(sample())
	f.Add(good[:len(good)-4])
	f.Add([]byte(magic + "\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, body []byte) {
		b := binary.LittleEndian.AppendUint32(append([]byte(nil), body...), crc32.Checksum(body, castagnoli))
		types, err := Decode(b)
		if err != nil {
			return
		}
		if !bytes.Equal(Encode(types), b) {
			t.Fatal("re-encoding differs")
		}
	})
}
