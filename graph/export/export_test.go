package export

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strconv"
	"strings"
	"testing"
)

func sample() *Model {
	return &Model{
		Comparator: "cos",
		Types: []Type{
			{Name: "node", Names: []string{"a", "bé"}, Dim: 3, Emb: []float32{1, -2.5, 1e-7, 0.1, 3, 4}},
			{Name: "user", Names: []string{}, Dim: 3},
		},
		Relations: []Relation{
			{Name: "follows", Lhs: "user", Rhs: "user", Side: "rhs", Operator: "diagonal", Params: []float32{1, 0.5, -3e-5}},
			{Name: "follows", Lhs: "user", Rhs: "user", Side: "lhs", Operator: "diagonal", Params: []float32{2, 0, 1}},
			{Name: "is", Lhs: "user", Rhs: "node", Side: "rhs", Operator: "none"},
			{Name: "is", Lhs: "user", Rhs: "node", Side: "lhs", Operator: "none"},
		},
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
	want := sample()
	want.Types[1].Emb = []float32{}
	for i := range want.Relations[2:] {
		want.Relations[2+i].Params = []float32{}
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Fatalf("round trip: %+v", got)
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

// Invariant 1: TSV lines parse back to the same float32 values; the
// comparator and the relations follow the entities.
func TestTSV(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTSV(&buf, sample()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{"node\ta\t", "node\tbé\t", "@comparator\tcos", "@relation\tfollows\tuser\tuser\trhs\tdiagonal\t1\t0.5\t-3e-05",
		"@relation\tfollows\tuser\tuser\tlhs\tdiagonal\t2\t0\t1", "@relation\tis\tuser\tnode\trhs\tnone", "@relation\tis\tuser\tnode\tlhs\tnone"}
	if len(lines) != len(want) {
		t.Fatalf("lines: %q", lines)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) || i >= 2 && lines[i] != w {
			t.Fatalf("line %d: %q, want %q", i, lines[i], w)
		}
	}
	for i, l := range lines[:2] {
		f := strings.Split(l, "\t")
		for k, s := range f[2:] {
			v, err := strconv.ParseFloat(s, 32)
			if err != nil || float32(v) != sample().Types[0].Emb[i*3+k] {
				t.Fatalf("line %d value %d: %q", i, k, s)
			}
		}
	}
	m := sample()
	m.Types[1].Name = "@user"
	if err := WriteTSV(&buf, m); err == nil || !strings.Contains(err.Error(), `"@user"`) {
		t.Fatalf("type named @user: %v", err)
	}
}

// Invariant 2: a file of the first layout (entities only) still reads.
func TestDecodeV1(t *testing.T) {
	b := []byte(magicV1)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = append(b, 'n')
	b = binary.LittleEndian.AppendUint32(b, 2)
	b = binary.LittleEndian.AppendUint64(b, 1)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = append(b, 'a')
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(1.5))
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(-2))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	m, err := Decode(b)
	if err != nil || m.Comparator != "" || len(m.Relations) != 0 || fmt.Sprint(m.Types) != "[{n [a] 2 [1.5 -2]}]" {
		t.Fatalf("v1 file: %+v %v", m, err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(sample()))
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		if again, err := Decode(Encode(m)); err != nil || fmt.Sprint(again) != fmt.Sprint(m) {
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
	f.Add([]byte(magic + "\x00\x00\x00\x00\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, body []byte) {
		b := binary.LittleEndian.AppendUint32(append([]byte(nil), body...), crc32.Checksum(body, castagnoli))
		m, err := Decode(b)
		if err != nil || string(b[:8]) == magicV1 {
			return
		}
		if !bytes.Equal(Encode(m), b) {
			t.Fatal("re-encoding differs")
		}
	})
}
