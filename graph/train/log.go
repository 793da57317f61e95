package train

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// LogName is the training log batchprep train appends to beside the
// checkpoint: one JSON Event per line, written after the bucket's
// checkpoint is committed.
const LogName = "training_log.jsonl"

// CheckLog checks the training log at path against the checkpoint it sits
// beside (man, nil when there is none): every line a JSON object with the
// fields of an Event, ended by a newline, positions strictly increasing,
// and no more lines than the checkpoint has trained buckets (a line is
// written only after its bucket's checkpoint, so a kill can make the log
// lack a line, never have one too many). A missing log is fine. The error
// names the file, the line and the column.
func CheckLog(path string, man *Manifest) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var buckets int64
	if man != nil {
		buckets = man.Buckets
	}
	bad := func(line, col int, format string, a ...any) error {
		return fmt.Errorf("%s: line %d, column %d: %s", path, line, col, fmt.Sprintf(format, a...))
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n := bytes.Count(data, []byte{'\n'})
		last := data[bytes.LastIndexByte(data, '\n')+1:]
		return bad(n+1, len(last)+1, "the last line is cut short (no newline)")
	}
	var prev *Position
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		var ev struct {
			Epoch   *int     `json:"epoch"`
			EdgeSet *int     `json:"edge_set"`
			Chunk   *int     `json:"chunk"`
			Index   *int     `json:"index"`
			Edges   *int     `json:"edges"`
			Loss    *float64 `json:"loss"`
		}
		text := sc.Bytes()
		dec := json.NewDecoder(bytes.NewReader(text))
		if err := dec.Decode(&ev); err != nil {
			col := len(text) + 1
			var se *json.SyntaxError
			if errors.As(err, &se) {
				col = int(se.Offset)
			}
			return bad(line, col, "not a training log entry: %v", err)
		}
		if dec.InputOffset() != int64(len(bytes.TrimRight(text, " \t\r"))) {
			return bad(line, int(dec.InputOffset())+1, "text after the JSON object")
		}
		if ev.Epoch == nil || ev.EdgeSet == nil || ev.Chunk == nil || ev.Index == nil || ev.Edges == nil || ev.Loss == nil {
			return bad(line, 1, "not a training log entry (epoch, edge_set, chunk, index, edges and loss are required)")
		}
		pos := Position{*ev.Epoch, *ev.EdgeSet, *ev.Chunk, *ev.Index}
		if prev != nil && !before(*prev, pos) {
			return bad(line, 1, "bucket position %+v does not follow the previous line's %+v: lines of two runs are mixed", pos, *prev)
		}
		prev = &pos
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: line %d: %v", path, line+1, err)
	}
	if int64(line) > buckets {
		return fmt.Errorf("%s: %d lines for a checkpoint of %d trained buckets: the log belongs to another run (or the checkpoint was replaced); move it away to start a new log", path, line, buckets)
	}
	return nil
}

// before reports whether a comes before b in training order.
func before(a, b Position) bool {
	for _, d := range [][2]int{{a.Epoch, b.Epoch}, {a.EdgeSet, b.EdgeSet}, {a.Chunk, b.Chunk}, {a.Index, b.Index}} {
		if d[0] != d[1] {
			return d[0] < d[1]
		}
	}
	return false
}
