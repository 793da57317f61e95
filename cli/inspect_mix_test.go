package cli

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestInspectMix: inspect --mix reports each corpus exactly as inspect
// alone does, then the anchor and each corpus's share and sweep span; the
// anchor is the corpus whose sweep read --mix's first epoch (--epoch-size
// full) holds whole.
func TestInspectMix(t *testing.T) {
	var a, b strings.Builder
	for i := range 30 {
		for j := range 1 + i%4 {
			a.WriteString(strconv.Itoa(i) + " |x " + strconv.Itoa(j) + " 1\n")
		}
	}
	for i := range 12 {
		b.WriteString(strconv.Itoa(i) + " |x 2 " + strconv.Itoa(i) + "\n")
	}
	ctfA, ctfB := inspectFile(t, a.String()), inspectFile(t, b.String())
	pqB := filepath.Join(t.TempDir(), "b.parquet")
	if code, _, errOut := run(t, "convert", ctfB, pqB, "--stream", "x:2"); code != 0 {
		t.Fatalf("convert: %d %s", code, errOut)
	}
	for _, c := range []struct {
		wa, wb string
		anchor int
	}{
		{"0.9", "0.1", 1},               // A: 73 samples / 0.9 = 81; B: 12 / 0.1 = 120
		{"0.5", "0.5", 0},               // 146 against 24
		{"samples:10", "samples:40", 0}, // 365 against 15
		{"0.95", "0.05", 1},             // 76 against 240
	} {
		mix := []string{"--mix", ctfA + "=" + c.wa, "--mix", pqB + "=" + c.wb}
		code, out, errOut := run(t, append([]string{"inspect", "--format", "json", "--stream", "x:2"}, mix...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", mix, code, errOut)
		}
		var rep struct {
			Corpora []map[string]any `json:"corpora"`
			Mixture inspectMixShape  `json:"mixture"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		for k, f := range []string{ctfA, pqB} {
			_, alone, _ := inspectJSON(t, f, "--stream", "x:2")
			if !reflect.DeepEqual(rep.Corpora[k], alone) {
				t.Errorf("%v: corpus %d's report differs from inspect %s alone:\n%v\n%v", mix, k, f, rep.Corpora[k], alone)
			}
		}
		m := rep.Mixture
		if m.Anchor != c.anchor || len(m.Corpora) != 2 || m.Corpora[0].SweepSamples != 73 || m.Corpora[1].SweepSamples != 12 ||
			m.Corpora[1].Weight != c.wb {
			t.Fatalf("%v: mixture %+v", mix, m)
		}
		// One anchor sweep is read --mix's first epoch: it holds the
		// anchor's sweep exactly.
		code, sum, errOut := run(t, append([]string{"read", "--quiet", "--format", "summary", "--stream", "x:2"}, mix...)...)
		if code != 0 {
			t.Fatalf("read %v: %d %s", mix, code, errOut)
		}
		got := regexp.MustCompile(`samples corpus ` + strconv.Itoa(c.anchor) + `: (\d+)`).FindStringSubmatch(sum)
		if got == nil || got[1] != strconv.FormatUint(m.Corpora[c.anchor].SweepSamples, 10) {
			t.Fatalf("%v: read's first epoch: %q, want the anchor's sweep of %d samples", mix, sum, m.Corpora[c.anchor].SweepSamples)
		}
	}
	code, out, _ := run(t, "inspect", "--stream", "x:2", "--mix", ctfA+"=0.75", "--mix", ctfB+"=0.25")
	want := "anchor corpus 0 (" + ctfA + ")"
	if code != 0 || !strings.Contains(out, "== corpus 1\n") || !strings.Contains(out, want) ||
		!strings.Contains(out, "weight 0.25, share 1/4; a sweep: 12 samples, 48 of the mixture's timeline") {
		t.Fatalf("text report (exit %d):\n%s", code, out)
	}
	for _, args := range [][]string{
		{"inspect", ctfA, "--mix", ctfA + "=1"},
		{"inspect", "--mix", ctfA + "=x"},
		{"inspect", "--mix", ctfA + "=0.5", "--mix", ctfB + "=samples:3"},
	} {
		if code, _, _ := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, out, errOut := run(t, "inspect", "--mix", ctfA+"=1", "--mix", ctfA+".missing=1"); code != 1 || !strings.Contains(errOut, "--mix 1") {
		t.Errorf("a missing corpus: exit %d, %q %q", code, out, errOut)
	}
}
