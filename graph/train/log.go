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
// beside (man, nil when there is none): every line a JSON object ended by
// a newline, either a single-process run's Event (epoch, edge_set, chunk,
// index, edges and loss; positions strictly increasing from one such line
// to the next) or a distributed rank's line (DistEvent: kind claim, commit
// or lost, with rank, pass, claim and the bucket's position; commit and
// lost lines also edges and loss), and no more trained buckets (single
// lines and commit lines) than the checkpoint has (a line is written only
// after its bucket's checkpoint, so a kill can make the log lack a line,
// never have one too many). A log holds the lines of a run and of the
// runs that continued it, single-process or distributed, in any order. A
// missing log is fine. The error names the file, the line and the column.
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
	var trained int64
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		var ev struct {
			Kind    *string  `json:"kind"`
			Rank    *int     `json:"rank"`
			Pass    *int     `json:"pass"`
			Claim   *int64   `json:"claim"`
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
		placed := ev.Epoch != nil && ev.EdgeSet != nil && ev.Chunk != nil && ev.Index != nil
		if ev.Kind != nil {
			kind := *ev.Kind
			switch {
			case kind != "claim" && kind != "commit" && kind != "lost":
				return bad(line, 1, "kind %q: a distributed run's lines are claim, commit or lost", kind)
			case ev.Rank == nil || ev.Pass == nil || ev.Claim == nil || !placed:
				return bad(line, 1, "not a distributed training log entry (rank, pass, claim, epoch, edge_set, chunk and index are required)")
			case kind != "claim" && (ev.Edges == nil || ev.Loss == nil):
				return bad(line, 1, "a %s line without edges and loss", kind)
			}
			if kind == "commit" {
				trained++
			}
			continue
		}
		if !placed || ev.Edges == nil || ev.Loss == nil {
			return bad(line, 1, "not a training log entry (epoch, edge_set, chunk, index, edges and loss are required)")
		}
		pos := Position{*ev.Epoch, *ev.EdgeSet, *ev.Chunk, *ev.Index}
		if prev != nil && !before(*prev, pos) {
			return bad(line, 1, "bucket position (epoch %d, edge set %d, chunk %d, index %d) does not follow the previous line's (epoch %d, edge set %d, chunk %d, index %d): lines of two runs are mixed",
				pos.Epoch, pos.EdgeSet, pos.Chunk, pos.Index, prev.Epoch, prev.EdgeSet, prev.Chunk, prev.Index)
		}
		prev = &pos
		trained++
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: line %d: %v", path, line+1, err)
	}
	if trained > buckets {
		return fmt.Errorf("%s: %d trained buckets logged for a checkpoint of %d: the log belongs to another run (or the checkpoint was replaced); move it away to start a new log", path, trained, buckets)
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
