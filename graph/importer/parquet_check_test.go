package importer

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// pageHeader encodes a data page header claiming the given sizes.
func pageHeader(t *testing.T, compressed, uncompressed int32) []byte {
	t.Helper()
	b, err := thrift.Marshal(new(thrift.CompactProtocol), &format.PageHeader{
		Type: format.DataPage, CompressedPageSize: compressed, UncompressedPageSize: uncompressed})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkPages accepts pages that fit their column chunk and refuses a
// header claiming more bytes than the chunk holds (which the library
// would allocate before reading), an unreadable header, and a chunk
// outside the file.
func TestCheckPages(t *testing.T) {
	var good []byte
	for range 3 {
		good = append(good, pageHeader(t, 10, 40)...)
		good = append(good, make([]byte, 10)...)
	}
	lie := append(pageHeader(t, 10, 40), make([]byte, 10)...)
	lie = append(lie, pageHeader(t, 1<<30, 1<<30)...)
	lie = append(lie, make([]byte, 10)...)
	for _, tc := range []struct {
		name  string
		data  []byte
		start int64
		n     int64
		want  string
	}{
		{"good", good, 0, int64(len(good)), ""},
		{"good at an offset", append(make([]byte, 7), good...), 7, int64(len(good)), ""},
		{"a lying header", lie, 0, int64(len(lie)), "claims 1073741824 bytes"},
		{"cut", good[:len(good)-3], 0, int64(len(good) - 3), "claims 10 bytes (40 uncompressed) with 7 left"},
		{"garbage", bytes.Repeat([]byte{0xff}, 64), 0, 64, "unreadable page header"},
		{"outside the file", good, 5, int64(len(good)), "lies outside"},
	} {
		md := &format.ColumnMetaData{DataPageOffset: tc.start, TotalCompressedSize: tc.n}
		err := checkPages(bytes.NewReader(tc.data), int64(len(tc.data)), md, "c")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, errCorrupt)):
			t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.want)
		}
	}
}
