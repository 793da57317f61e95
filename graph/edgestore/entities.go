package edgestore

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// File names inside entity_path, as PBG lays them out.
const (
	relNamesFile = "dynamic_rel_names.json"
	relCountFile = "dynamic_rel_count.txt"
)

func countFile(typ string, part int) string {
	return fmt.Sprintf("entity_count_%s_%d.txt", typ, part)
}

func namesFile(typ string, part int) string {
	return fmt.Sprintf("entity_names_%s_%d.json", typ, part)
}

// writeNames writes names as a JSON list, one name per line indented by
// four spaces (the layout of PBG's json.dump(names, indent=4)). Names must
// be valid UTF-8.
func writeNames(w io.Writer, names []string) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if len(names) == 0 {
		bw.WriteString("[]")
		return bw.Flush()
	}
	bw.WriteString("[\n")
	for i, n := range names {
		if !utf8.ValidString(n) {
			return fmt.Errorf("name %q is not valid UTF-8", n)
		}
		bw.WriteString("    ")
		if plainJSON(n) {
			bw.WriteByte('"')
			bw.WriteString(n)
			bw.WriteByte('"')
		} else {
			b, err := json.Marshal(n)
			if err != nil {
				return err
			}
			bw.Write(b)
		}
		if i < len(names)-1 {
			bw.WriteString(",\n")
		} else {
			bw.WriteString("\n")
		}
	}
	bw.WriteString("]")
	return bw.Flush()
}

// plainJSON reports whether s can be written between quotes unchanged.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// parseNames decodes a names file.
func parseNames(data []byte) ([]string, error) {
	var names []string
	if err := json.Unmarshal(data, &names); err != nil {
		return nil, err
	}
	if names == nil {
		return nil, fmt.Errorf("not a JSON list of strings")
	}
	return names, nil
}

// countText is the content of a count file: the integer and a newline.
func countText(n int64) []byte { return []byte(strconv.FormatInt(n, 10) + "\n") }
