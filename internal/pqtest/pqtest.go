// Package pqtest makes Parquet files in shapes no writer makes on purpose,
// for tests of the readers (tests only).
package pqtest

import (
	"encoding/binary"
	"errors"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// WithCodec returns the Parquet file data with its footer rewritten so
// that every column chunk claims codec c; the pages stay as written.
func WithCodec(data []byte, c format.CompressionCodec) ([]byte, error) {
	n := len(data)
	if n < 12 {
		return nil, errors.New("pqtest: not a Parquet file")
	}
	flen := int(binary.LittleEndian.Uint32(data[n-8:]))
	if flen > n-12 {
		return nil, errors.New("pqtest: footer longer than the file")
	}
	var md format.FileMetaData
	var proto thrift.CompactProtocol
	if err := thrift.Unmarshal(&proto, data[n-8-flen:n-8], &md); err != nil {
		return nil, err
	}
	for g := range md.RowGroups {
		for i := range md.RowGroups[g].Columns {
			md.RowGroups[g].Columns[i].MetaData.Codec = c
		}
	}
	footer, err := thrift.Marshal(&proto, &md)
	if err != nil {
		return nil, err
	}
	out := append(append([]byte(nil), data[:n-8-flen]...), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...), nil
}
