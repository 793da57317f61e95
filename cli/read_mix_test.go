package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type mixRec struct {
	readRec
	Corpus        []int `json:"corpus"`
	SkippedCorpus []int `json:"skipped_corpus"`
}

func parseMixJSONL(t *testing.T, out string) []mixRec {
	t.Helper()
	var recs []mixRec
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		var r mixRec
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("line %d %q: %v", i+1, line, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// mixFiles writes the tiny CTF corpus and a second one (ids 500..., other
// lengths) converted to Parquet with the convert command.
func mixFiles(t *testing.T) (ctfPath, pqPath string) {
	t.Helper()
	ctfPath = tinyCTF(t)
	var b strings.Builder
	for i := 0; i < 11; i++ {
		for j := 0; j < 1+i%4; j++ {
			fmt.Fprintf(&b, "%d |x %d %d", 500+i, 50+i, j)
			if j == 0 {
				b.WriteString(" |y 2")
			}
			b.WriteString("\n")
		}
	}
	dir := t.TempDir()
	second := filepath.Join(dir, "second.ctf")
	if err := os.WriteFile(second, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	pqPath = filepath.Join(dir, "second.parquet")
	if code, _, errOut := run(t, "convert", second, pqPath, "--stream", "x:2", "--stream", "y:1"); code != 0 {
		t.Fatalf("convert: %s", errOut)
	}
	return ctfPath, pqPath
}

// TestReadMix reads a mixture of a CTF and a Parquet corpus: jsonl names
// each sequence's corpus, ids are those of that corpus, the timeline is
// contiguous, the shares follow the weights within the bound, and summary
// prints the same samples per corpus.
func TestReadMix(t *testing.T) {
	a, b := mixFiles(t)
	args := []string{"read", "--mix", a + "=0.7", "--mix", b + "=0.3", "--stream", "x:2", "--stream", "y:1",
		"--mb", "9", "--epoch-size", "200", "--epochs", "2", "--seed", "3"}
	code, out, errOut := run(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	recs := parseMixJSONL(t, out)
	var pos uint64
	per := [2]int{}
	for i, r := range recs {
		if r.Start != pos || r.Step != uint64(i) || len(r.Corpus) != len(r.Sequences) || len(r.IDs) != len(r.Sequences) {
			t.Fatalf("record %d: %+v", i, r)
		}
		pos = r.End
		for j, c := range r.Corpus {
			base, n := 100, 1+r.Sequences[j]%3
			if c == 1 {
				base, n = 500, 1+r.Sequences[j]%4
			}
			if r.IDs[j] != fmt.Sprint(base+r.Sequences[j]) {
				t.Fatalf("record %d: corpus %d sequence %d has id %s", i, c, r.Sequences[j], r.IDs[j])
			}
			per[c] += n
		}
		// Invariant 1 with L = 3 and 4: -0.7*4 <= c_0 - 0.7*T <= 0.3*3.
		if d := float64(per[0]) - 0.7*float64(per[0]+per[1]); d < -2.8-1e-9 || d > 0.9+1e-9 {
			t.Fatalf("record %d: corpus 0 has %d of %d samples", i, per[0], per[0]+per[1])
		}
	}
	if pos != 400 && (pos < 400 || recs[len(recs)-1].EndOfEpoch != true) {
		t.Fatalf("two epochs of 200 ended at %d", pos)
	}
	_, sum, _ := run(t, append(args, "--format", "summary")...)
	for k, n := range per {
		if want := fmt.Sprintf("samples corpus %d: %d (", k, n); !strings.Contains(sum, want) {
			t.Fatalf("summary %q lacks %q", sum, want)
		}
	}
}

// TestReadMixResume: --state-out after some minibatches, then --state-in
// with two workers (both ranks), gives the uninterrupted run's rest.
func TestReadMixResume(t *testing.T) {
	a, b := mixFiles(t)
	dir := t.TempDir()
	base := []string{"read", "--mix", a + "=samples:30", "--mix", b + "=samples:10", "--stream", "x:2", "--stream", "y:1",
		"--mb", "5*2:8", "--epoch-size", "40", "--epochs", "3", "--chunk-sequences", "2", "--window-chunks", "2"}
	_, out, _ := run(t, base...)
	full := parseMixJSONL(t, out)
	st := filepath.Join(dir, "st.json")
	_, out, errOut := run(t, append(base, "--max-minibatches", "7", "--state-out", st)...)
	first := parseMixJSONL(t, out)
	if len(first) != 7 {
		t.Fatalf("first part: %d records: %s", len(first), errOut)
	}
	var ranks [2][]mixRec
	for r := range ranks {
		code, out, errOut := run(t, append(base, "--state-in", st, "--workers", "2", "--rank", fmt.Sprint(r))...)
		if code != 0 {
			t.Fatalf("rank %d: %s", r, errOut)
		}
		ranks[r] = parseMixJSONL(t, out)
	}
	rest := full[7:]
	if len(ranks[0]) != len(rest) || len(ranks[1]) != len(rest) {
		t.Fatalf("resumed %d and %d records, want %d", len(ranks[0]), len(ranks[1]), len(rest))
	}
	for i, want := range rest {
		u := ranks[0][i]
		u.Sequences = append(append([]int(nil), u.Sequences...), ranks[1][i].Sequences...)
		u.Corpus = append(append([]int(nil), u.Corpus...), ranks[1][i].Corpus...)
		u.IDs = append(append([]string(nil), u.IDs...), ranks[1][i].IDs...)
		u.Samples = want.Samples
		if !reflect.DeepEqual(u, want) {
			t.Fatalf("step %d: resumed %+v, want %+v", want.Step, u, want)
		}
	}
	// Another weight is refused, naming the field.
	code, _, errOut := run(t, "read", "--mix", a+"=samples:20", "--mix", b+"=samples:10", "--stream", "x:2", "--stream", "y:1",
		"--epoch-size", "40", "--chunk-sequences", "2", "--window-chunks", "2", "--state-in", st)
	if code != 1 || !strings.Contains(errOut, "mix0.weight") {
		t.Fatalf("other weights: exit %d, %s", code, errOut)
	}
}

func TestReadMixErrors(t *testing.T) {
	a, b := mixFiles(t)
	s := []string{"--stream", "x:2", "--stream", "y:1"}
	cases := []struct {
		code int
		want string
		args []string
	}{
		{2, "no CORPUS argument", append([]string{"read", a, "--mix", b + "=1"}, s...)},
		{2, "--mix \"" + b + "\": mixture: bad weight: want CORPUS=WEIGHT", append([]string{"read", "--mix", b}, s...)},
		{2, `bad weight "0"`, append([]string{"read", "--mix", b + "=0"}, s...)},
		{2, "every corpus samples:N", append([]string{"read", "--mix", a + "=0.5", "--mix", b + "=samples:9"}, s...)},
		{1, "--mix 1 (" + b + ")", []string{"read", "--mix", a + "=1", "--mix", b + "=1", "--stream", "x:2", "--stream", "z:3"}},
	}
	for _, c := range cases {
		code, _, errOut := run(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args[1:], code, errOut, c.code, c.want)
		}
	}
}
