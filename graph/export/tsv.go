package export

import (
	"bufio"
	"io"
	"strconv"
)

// WriteTSV writes types as TSV lines (invariant 1).
func WriteTSV(w io.Writer, types []Type) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var buf []byte
	for _, t := range types {
		for i, name := range t.Names {
			buf = append(buf[:0], t.Name...)
			buf = append(buf, '\t')
			buf = append(buf, name...)
			for _, v := range t.Emb[i*t.Dim : (i+1)*t.Dim] {
				buf = append(buf, '\t')
				buf = strconv.AppendFloat(buf, float64(v), 'g', -1, 32)
			}
			buf = append(buf, '\n')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}
