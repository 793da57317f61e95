package ctf

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/shared"
)

// The acceptance corpus: CNTK's reader unit-test inputs
// (../shared/data/ctf/reader_tests/Data) read with the stream setups of
// Config/{dense,sparse,edge_cases}.cntk, transcribed below (each entry names
// its config section), and compared with CNTK's dumps in Control/.
//
// The dumps are CNTK's minibatches (randomized in most sections, several
// epochs, at most 10 minibatches per epoch, sequences packed in parallel
// columns), one line per sample of a stream with the values printed %g with
// 6 significant digits (a few dim-1 dumps put two samples on one line).
// Their order therefore reflects CNTK's randomizer and packer, not the file,
// so the comparison is order-independent: every control line must be one of
// the samples we read (rendered the same way), and, where CNTK saw the whole
// file (exhaustive below), every sample we read must appear in the dump.
type acceptCase struct {
	section    string // config file and section
	data       string
	controls   []string
	streams    []corpus.Stream
	mb         string
	chunkBytes int64
	exhaustive bool // the dump covers every sample of the file
	// bad lists sequences batchprep rejects where CNTK (in double
	// precision) did not: values beyond the float32 range. Their control
	// lines are skipped.
	bad []string
}

func acceptanceCases() []acceptCase {
	d := func(n string, dim int) corpus.Stream { return dense(n, dim) }
	s := func(n string, dim int) corpus.Stream { return sparse(n, dim) }
	return []acceptCase{
		{"dense.cntk 1x1", "1x1_dense.txt", []string{"1x1_1_dense.txt", "1x1_2_dense.txt"}, []corpus.Stream{d("F", 10000)}, "", 0, true, nil},
		{"dense.cntk 1x2", "1x2_dense.txt", []string{"1x2_dense.txt"}, []corpus.Stream{d("F0", 100)}, "", 0, true, nil},
		{"dense.cntk 1x10", "1x10_dense.txt", []string{"1x10_dense.txt"}, []corpus.Stream{d("F0", 10)}, "", 0, true, nil},
		{"dense.cntk 10x1_MI", "10x1_MI_dense.txt", []string{"10x1_MI_1_dense.txt", "10x1_MI_2_dense.txt"},
			[]corpus.Stream{d("F1", 1), d("F2", 10), d("F3", 100), d("F4", 1000), d("L1", 1), d("L2", 10), d("L3", 100)}, "", 50000, true, nil},
		{"dense.cntk 10x10", "10x10_dense.txt", []string{"10x10_dense.txt"}, []corpus.Stream{d("F0", 5)}, "", 0, true, nil},
		{"dense.cntk 100x1", "100x1_dense.txt", []string{"100x1_1_dense.txt", "100x1_2_dense.txt"}, []corpus.Stream{d("F", 100), d("L", 100)}, "", 10000, true, nil},
		{"dense.cntk MNIST", "MNIST_dense.txt", []string{"MNIST_dense.txt"}, []corpus.Stream{d("F", 784), d("L", 10)}, "", 10000, true, nil},
		{"dense.cntk Simple", "Simple_dense.txt", []string{"Simple_dense.txt"}, []corpus.Stream{d("F", 2), d("L", 2)}, "", 0, false, nil},
		{"dense.cntk Simple_single_stream", "Simple_dense.txt", []string{"Simple_dense_single_stream.txt"}, []corpus.Stream{d("F", 2)}, "", 0, false, nil},
		{"dense.cntk 50x20_jagged_sequences", "50x20_jagged_sequences_dense.txt", []string{"50x20_jagged_sequences_dense.txt"}, []corpus.Stream{d("F0", 3)}, "", 0, false, []string{"16"}},
		{"dense.cntk 5x10_and_5x5_jagged", "5x10_and_5x5_jagged.txt", nil, []corpus.Stream{d("F0", 10), d("F1", 5)}, "", 0, false, nil},
		{"sparse.cntk 1x1", "1x1_sparse.txt", []string{"1x1_sparse.txt"}, []corpus.Stream{s("F0", 10000)}, "", 0, true, nil},
		{"sparse.cntk 1x2", "1x2_sparse.txt", []string{"1x2_sparse.txt"}, []corpus.Stream{s("F0", 1000)}, "", 0, true, nil},
		{"sparse.cntk 1x10", "1x10_sparse.txt", []string{"1x10_sparse.txt"}, []corpus.Stream{s("F0", 100)}, "", 0, true, nil},
		{"sparse.cntk 10x10", "10x10_sparse.txt", []string{"10x10_sparse.txt"}, []corpus.Stream{s("F0", 100)}, "", 0, true, nil},
		{"sparse.cntk 3x5_MI", "3x5_MI_sparse.txt", []string{"3x5_MI_sparse.txt"}, []corpus.Stream{s("F0", 2), s("F1", 20), s("F2", 200)}, "", 0, true, nil},
		{"sparse.cntk 20x10_MI_jagged_samples", "20x10_MI_jagged_samples_sparse.txt", []string{"20x10_MI_jagged_samples_sparse.txt"},
			[]corpus.Stream{s("F0", 2), s("F1", 20), s("F2", 200)}, "", 0, true, nil},
		{"sparse.cntk 50x20_jagged_sequences", "50x20_jagged_sequences_sparse.txt", []string{"50x20_jagged_sequences_sparse.txt"}, []corpus.Stream{s("F0", 100)}, "", 0, true, nil},
		{"sparse.cntk 100x100_jagged", "100x100_jagged_sparse.txt", []string{"100x100_jagged_sparse.txt"}, []corpus.Stream{s("F0", 20)}, "", 0, false, nil},
		{"edge_cases.cntk space_separated", "space_separated.txt", []string{"space_separated.txt"}, []corpus.Stream{d("F1", 15), d("F2", 12), d("F3", 1)}, "", 0, true, nil},
		{"edge_cases.cntk missing_trailing_newline", "missing_trailing_newline.txt", []string{"missing_trailing_newline.txt"}, []corpus.Stream{d("features", 1)}, "", 0, true, nil},
		{"edge_cases.cntk empty_samples", "empty_samples.txt", []string{"empty_samples.txt"}, []corpus.Stream{d("F0", 10), s("F1", 10)}, "", 0, true, nil},
		{"edge_cases.cntk ref_data_with_escape_sequences", "ref_data_with_escape_sequences.txt", []string{"ref_data_with_escape_sequences.txt"},
			[]corpus.Stream{s("F0", 100), d("F1", 3)}, "", 0, true, nil},
	}
}

// render formats one sample as CNTK's dump does: densified, %g with 6
// significant digits, space separated.
func render(ch *corpus.Chunk, streams []corpus.Stream, s int, j int32) string {
	st := streams[s]
	d := &ch.Streams[s]
	vals := make([]float32, st.Dim)
	if st.Sparse {
		for k := d.RowStart[j]; k < d.RowStart[j+1]; k++ {
			vals[d.Indices[k]] += d.Values[k]
		}
	} else {
		copy(vals, d.Dense[int(j)*st.Dim:])
	}
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = strconv.FormatFloat(float64(v), 'g', 6, 32)
	}
	return strings.Join(parts, " ")
}

// readSamples reads a file and returns the rendered samples of the good
// sequences, per stream, plus the number of samples.
func readSamples(t *testing.T, path string, cfg Config) (map[string]bool, int) {
	set, n, _ := readSamplesBad(t, path, cfg)
	return set, n
}

func readSamplesBad(t *testing.T, path string, cfg Config) (map[string]bool, int, []string) {
	r, err := Open(path, cfg)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer r.Close()
	set := map[string]bool{}
	n := 0
	var bad []string
	for c := 0; c < r.Layout().NumChunks(); c++ {
		ch, err := r.LoadChunk(c)
		if err != nil {
			t.Fatalf("%s: chunk %d: %v", path, c, err)
		}
		for i, b := range ch.Bad {
			if b != nil {
				bad = append(bad, ch.IDs[i])
			}
		}
		for s := range cfg.Streams {
			d := &ch.Streams[s]
			for j := int32(0); j < d.SeqStart[len(d.SeqStart)-1]; j++ {
				set[render(ch, cfg.Streams, s, j)] = true
				n++
			}
		}
	}
	return set, n, bad
}

// badSequenceLines renders, as CNTK's double-precision dump would, the
// dense samples of the sequences with the given ids (single-stream files),
// so that their control lines can be skipped.
func badSequenceLines(t *testing.T, path string, ids []string) map[string]bool {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		for _, id := range ids {
			if !strings.HasPrefix(line, id+"|") {
				continue
			}
			toks := strings.Fields(line[strings.IndexByte(line, ' '):])
			for i, tok := range toks {
				v, _ := strconv.ParseFloat(tok, 64)
				toks[i] = strconv.FormatFloat(v, 'g', 6, 64)
			}
			out[strings.Join(toks, " ")] = true
		}
	}
	return out
}

// controlLineOK reports whether a control line is one of our samples, or
// several of them on one line (groups of a stream's dimension).
func controlLineOK(line string, ours map[string]bool, streams []corpus.Stream) bool {
	toks := strings.Fields(line)
	if ours[strings.Join(toks, " ")] {
		return true
	}
	for _, st := range streams {
		if len(toks)%st.Dim != 0 || len(toks) == st.Dim {
			continue
		}
		ok := true
		for i := 0; i < len(toks) && ok; i += st.Dim {
			ok = ours[strings.Join(toks[i:i+st.Dim], " ")]
		}
		if ok {
			return true
		}
	}
	return false
}

func TestAcceptanceControlFiles(t *testing.T) {
	root := shared.Need(t, "ctf/reader_tests")
	for _, tc := range acceptanceCases() {
		for _, defMB := range []bool{false, true} {
			cfg := Config{Streams: tc.streams, ChunkBytes: tc.chunkBytes, MaxErrors: len(tc.bad)}
			if defMB { // the second run of each section: the first stream defines the minibatch size
				cfg.DefinesMBSize = tc.streams[0].Name
			}
			ours, n, bad := readSamplesBad(t, filepath.Join(root, "Data", tc.data), cfg)
			if strings.Join(bad, ",") != strings.Join(tc.bad, ",") {
				t.Errorf("%s: bad sequences %v, want %v", tc.section, bad, tc.bad)
			}
			if n == 0 {
				t.Errorf("%s: no samples", tc.section)
			}
			seen := map[string]bool{}
			skip := badSequenceLines(t, filepath.Join(root, "Data", tc.data), tc.bad)
			for _, ctl := range tc.controls {
				b, err := os.ReadFile(filepath.Join(root, "Control", ctl))
				if err != nil {
					t.Fatal(err)
				}
				for i, line := range strings.Split(string(b), "\n") {
					if strings.TrimSpace(line) == "" {
						continue
					}
					if skip[strings.Join(strings.Fields(line), " ")] {
						continue
					}
					if !controlLineOK(line, ours, tc.streams) {
						t.Errorf("%s (defMBSize %v): %s line %d is none of our samples: %.80s", tc.section, defMB, ctl, i+1, line)
						break
					}
					seen[strings.Join(strings.Fields(line), " ")] = true
				}
			}
			if tc.exhaustive && len(tc.controls) > 0 {
				missing := 0
				for smp := range ours {
					if !seen[smp] {
						missing++
					}
				}
				if missing > 0 && !multiSampleLines(tc) {
					t.Errorf("%s: %d of our %d distinct samples are not in the control dump", tc.section, missing, len(ours))
				}
			}
		}
	}
}

// multiSampleLines: dumps whose lines hold several samples (checked line by
// line above but not sample by sample).
func multiSampleLines(tc acceptCase) bool { return tc.data == "missing_trailing_newline.txt" }

// The composite section 5x10_and_5x5_jagged_composite: one file with two
// streams equals two single-stream files joined by sequence id.
func TestAcceptanceComposite(t *testing.T) {
	root := filepath.Join(shared.Need(t, "ctf/reader_tests"), "Data")
	both := seqsByID(t, filepath.Join(root, "5x10_and_5x5_jagged.txt"), []corpus.Stream{dense("F0", 10), dense("F1", 5)})
	a := seqsByID(t, filepath.Join(root, "5x10_jagged.txt"), []corpus.Stream{dense("F0", 10)})
	b := seqsByID(t, filepath.Join(root, "5x5_jagged.txt"), []corpus.Stream{dense("F1", 5)})
	if len(both) == 0 || len(both) != len(a) || len(a) != len(b) {
		t.Fatalf("sequence counts %d %d %d", len(both), len(a), len(b))
	}
	for id, s := range both {
		if err := sameBits([]seqData{s}, []seqData{{id, [][]Sample{a[id].samples[0], b[id].samples[0]}}}); err != nil {
			t.Errorf("id %s: %v", id, err)
		}
	}
}

func seqsByID(t *testing.T, path string, streams []corpus.Stream) map[string]seqData {
	r, err := Open(path, Config{Streams: streams})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[string]seqData{}
	for _, ch := range loadAll(t, r) {
		for i, id := range ch.IDs {
			out[id] = seqData{id, ChunkSamples(ch, streams, i)}
		}
	}
	return out
}

// Data files without a config section here: read with inferred streams,
// they must parse cleanly.
func TestAcceptanceInferred(t *testing.T) {
	p := filepath.Join(shared.Need(t, "ctf/reader_tests"), "Data", "100x100_jagged_sequences_sparse.txt")
	streams, err := InferStreams(p)
	if err != nil || len(streams) == 0 {
		t.Fatalf("infer: %v %v", streams, err)
	}
	if _, n := readSamples(t, p, Config{Streams: streams}); n == 0 {
		t.Error("no samples")
	}
}

// edge_cases.cntk duplicate_inputs and blank_lines (skipSequenceIds, no
// error budget) must fail with clear errors; blank_lines_ignored
// (maxErrors = 2) reads. CNTK keeps the good row of the sequence whose blank
// line it charged; batchprep skips the whole sequence (docs/formats-ctf.md),
// so only the second sequence is read.
func TestAcceptanceFailures(t *testing.T) {
	root := filepath.Join(shared.Need(t, "ctf/reader_tests"), "Data")
	feat := []corpus.Stream{dense("features", 1)}
	for _, tc := range []struct {
		name string
		file string
		cfg  Config
		want error
		line int64
	}{
		{"duplicate_inputs", "duplicate_inputs.txt", Config{Streams: []corpus.Stream{dense("F1", 1), dense("F2", 1)}}, ErrDuplicateInput, 1},
		{"duplicate_inputs defMBSize", "duplicate_inputs.txt", Config{Streams: []corpus.Stream{dense("F1", 1), dense("F2", 1)}, DefinesMBSize: "F1"}, ErrDuplicateInput, 1},
		{"blank_lines", "contains_blank_lines.txt", Config{Streams: feat, LineMode: true}, ErrEmptyRow, 2},
		{"blank_lines_ignored budget 0", "contains_blank_lines.txt", Config{Streams: feat}, ErrEmptyRow, 2},
	} {
		r, err := Open(filepath.Join(root, tc.file), tc.cfg)
		if err == nil {
			for c := 0; c < r.Layout().NumChunks() && err == nil; c++ {
				_, err = r.LoadChunk(c)
			}
			r.Close()
		}
		var be *BudgetError
		if !errors.As(err, &be) || !errors.Is(err, tc.want) || be.Last.Line != tc.line || !strings.Contains(err.Error(), tc.file) {
			t.Errorf("%s: got %v, want %v on line %d", tc.name, err, tc.want, tc.line)
		}
	}
	set, _ := readSamples(t, filepath.Join(root, "contains_blank_lines.txt"), Config{Streams: feat, MaxErrors: 2})
	if len(set) != 1 || !set["2"] {
		t.Errorf("blank_lines_ignored: samples %v, want only the second sequence", set)
	}
	// With defines_mb_size in line mode the blank line carries no sample
	// and is skipped, as in CNTK.
	set, _ = readSamples(t, filepath.Join(root, "contains_blank_lines.txt"), Config{Streams: feat, LineMode: true, DefinesMBSize: "features"})
	if len(set) != 2 {
		t.Errorf("blank_lines with defMBSize: %v", set)
	}
}

var offsetRE = regexp.MustCompile(`^(WARNING|INFO): .* at offset (\d+) in the input file`)

// invalid_inputs: every line CNTK's log names has a diagnostic of ours. The
// log's offsets are CNTK's read position when it noticed the problem: after
// a row or a sequence they point at the start of the next line, so an entry
// at a line start is matched by a diagnostic on the previous line, and a
// sequence-level entry by any diagnostic of the sequence that ends there.
// INFO entries other than "Skipping unknown input" are progress messages.
func TestAcceptanceInvalidInputs(t *testing.T) {
	root := shared.Need(t, "ctf/reader_tests")
	path := filepath.Join(root, "Data", "invalid_inputs.txt")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var diags []Error
	cfg := Config{Streams: []corpus.Stream{dense("A", 1), sparse("B", 10)}, MaxErrors: 100,
		Warn: func(e Error) { diags = append(diags, e) }}
	r, err := Open(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	chunks := loadAll(t, r)
	lineOf := lineIndex(data)
	seqLines := map[int64][2]int64{} // last line -> [first, last] of each sequence
	for _, ch := range chunks {
		for i := range ch.IDs {
			o := ch.First + i
			off := seqOffset(r.x, o)
			first := lineOf(off)
			last := lineOf(off + int64(r.x.sizes[o]) - 1)
			seqLines[last] = [2]int64{first, last}
		}
	}
	have := map[int64]bool{}
	for _, d := range diags {
		have[d.Line] = true
	}
	log, err := os.ReadFile(filepath.Join(root, "Control", "invalid_inputs_Control.txt"))
	if err != nil {
		t.Fatal(err)
	}
	entries := 0
	for _, l := range strings.Split(strings.ReplaceAll(string(log), "('\n')", "('\\n')"), "\n") {
		m := offsetRE.FindStringSubmatch(l)
		if m == nil || m[1] == "INFO" && !strings.Contains(l, "Skipping unknown input") {
			continue
		}
		entries++
		off, _ := strconv.ParseInt(m[2], 10, 64)
		line := lineOf(off)
		ok := have[line]
		if lineStart(data, off) {
			ok = ok || have[line-1]
			if span, isSeq := seqLines[line-1]; isSeq && strings.Contains(l, "sequence") {
				for k := span[0]; k <= span[1]; k++ {
					ok = ok || have[k]
				}
			}
		}
		if !ok {
			t.Errorf("no diagnostic for line %d (offset %d): %s", line, off, l)
		}
	}
	if entries < 40 {
		t.Errorf("only %d log entries parsed", entries)
	}
	for _, d := range diags {
		if d.File != path || d.Col < 1 || d.Msg == "" {
			t.Errorf("diagnostic without position or message: %+v", d)
		}
	}
	// Sequence 5 is the only well-formed one, plus 6 (padding and an
	// over-long sample make it bad here: CNTK drops the sample only).
	good := 0
	for _, ch := range chunks {
		for i, b := range ch.Bad {
			if b == nil {
				good++
				if ch.IDs[i] != "5" {
					t.Errorf("sequence %s unexpectedly good", ch.IDs[i])
				}
			}
		}
	}
	if good != 1 {
		t.Errorf("%d good sequences, want 1", good)
	}
}

// lineIndex returns a function from byte offset to 1-based line.
func lineIndex(data []byte) func(int64) int64 {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return func(off int64) int64 {
		i, found := bisect(starts, int(off))
		if found {
			return int64(i + 1)
		}
		return int64(i)
	}
}

func bisect(a []int, x int) (int, bool) {
	lo, hi := 0, len(a)
	for lo < hi {
		m := (lo + hi) / 2
		if a[m] < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(a) && a[lo] == x
}

func lineStart(data []byte, off int64) bool {
	return off == 0 || off <= int64(len(data)) && data[off-1] == '\n'
}
