package export

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteTSV writes m as TSV lines (invariant 1): the entities, then the
// comparator, then the relations' parameters.
func WriteTSV(w io.Writer, m *Model) error {
	for _, t := range m.Types {
		if strings.HasPrefix(t.Name, "@") {
			return fmt.Errorf("export: entity type %q: a TSV export marks its model lines with '@', so a type name cannot start with it (use --format binary)", t.Name)
		}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var buf []byte
	line := func(head []string, vals []float32) error {
		buf = buf[:0]
		for i, h := range head {
			if i > 0 {
				buf = append(buf, '\t')
			}
			buf = append(buf, h...)
		}
		for _, v := range vals {
			buf = append(buf, '\t')
			buf = strconv.AppendFloat(buf, float64(v), 'g', -1, 32)
		}
		buf = append(buf, '\n')
		_, err := bw.Write(buf)
		return err
	}
	for _, t := range m.Types {
		for i, name := range t.Names {
			if err := line([]string{t.Name, name}, t.Emb[i*t.Dim:(i+1)*t.Dim]); err != nil {
				return err
			}
		}
	}
	if m.Comparator != "" {
		if err := line([]string{"@comparator", m.Comparator}, nil); err != nil {
			return err
		}
	}
	for _, r := range m.Relations {
		if err := line([]string{"@relation", r.Name, r.Lhs, r.Rhs, r.Side, r.Operator}, r.Params); err != nil {
			return err
		}
	}
	return bw.Flush()
}
