package source

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStateJSONRoundTrip(t *testing.T) {
	tc := oneSampleCorpus(t, 10, 3)
	cfg := Config{EpochSize: 4}
	cfg.Randomize.Kind = "none"
	s := mustNew(t, tc, cfg)
	readN(t, s, 3)
	st := s.State()
	data, err := EncodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"version":1`, `"position":`, `"step":3`, `"epoch":`, `"fingerprint":{`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("state JSON %s lacks %s", data, key)
		}
	}
	back, err := DecodeState(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Position != st.Position || back.Step != st.Step || back.Epoch != st.Epoch || len(back.Fingerprint) != len(st.Fingerprint) {
		t.Errorf("round trip %+v != %+v", back, st)
	}
}

// TestDecodeStateRejects checks A5.3: malformed, truncated, unknown-version,
// unknown-field and incomplete states are errors, never a restart from zero.
func TestDecodeStateRejects(t *testing.T) {
	good := `{"version":1,"position":5,"step":2,"epoch":0,"fingerprint":{"seed":"0"}}`
	if _, err := DecodeState([]byte(good)); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"":                                   "truncated",
		good[:len(good)-1]:                   "truncated",
		good[:20]:                            "truncated",
		"nonsense":                           "line 1, column 2: not valid JSON (unexpected 'o')",
		"[]":                                 "line 1, column 1: an array where an object belongs",
		strings.Replace(good, `1,`, `2,`, 1): "version 2 is not supported",
		strings.Replace(good, `"step"`, `"steps"`, 1):                     `unknown field "steps"`,
		`{"version":1,"step":2,"epoch":0,"fingerprint":{}}`:               `missing field "position"`,
		`{"version":1,"position":5,"epoch":0,"fingerprint":{}}`:           `missing field "step"`,
		`{"version":1,"position":5,"step":2,"fingerprint":{}}`:            `missing field "epoch"`,
		`{"version":1,"position":5,"step":2,"epoch":0}`:                   `missing field "fingerprint"`,
		`{"position":5,"step":2,"epoch":0,"fingerprint":{}}`:              `missing field "version"`,
		`{"version":1,"position":-5,"step":2,"epoch":0,"fingerprint":{}}`: `line 1, column 25: field "position" holds the number -5, want an integer >= 0`,
		`{"version":1,"position":5,"step":2,"epoch":-1,"fingerprint":{}}`: "negative epoch",
		good + `{}`: "after the JSON object",
	}
	for in, want := range cases {
		_, err := DecodeState([]byte(in))
		if err == nil || !errors.Is(err, ErrState) || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeState(%q): %v, want %q", in, err, want)
		}
	}
}

func TestStateFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	tc := oneSampleCorpus(t, 10, 3)
	cfg := Config{}
	cfg.Randomize.Kind = "none"
	s := mustNew(t, tc, cfg)
	for i := 0; i < 3; i++ {
		readN(t, s, 1)
		if err := WriteStateFile(p, s.State()); err != nil {
			t.Fatal(err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries after writes, want only the state file", len(ents))
	}
	st, err := ReadStateFile(p)
	if err != nil || st.Step != 3 {
		t.Fatalf("ReadStateFile: %+v %v", st, err)
	}
	os.WriteFile(p, []byte(`{"version":1,"posi`), 0o644)
	if _, err := ReadStateFile(p); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated file: %v", err)
	}
	if _, err := ReadStateFile(filepath.Join(dir, "absent.json")); err == nil {
		t.Error("missing file: no error")
	}
	if err := WriteStateFile(filepath.Join(dir, "no", "such", "dir.json"), st); err == nil {
		t.Error("write into a missing directory: no error")
	}
}

// TestRestoreFingerprintMismatch checks invariant 8: every differing field
// is named with both values; workers and schedule are not part of it.
func TestRestoreFingerprintMismatch(t *testing.T) {
	tc := oneSampleCorpus(t, 10, 3)
	cfg := Config{EpochSize: 4}
	cfg.Randomize.Kind = "none"
	cfg.Randomize.Seed = 1
	a := mustNew(t, tc, cfg)
	readN(t, a, 2)
	st := a.State()

	other := cfg
	other.Randomize.Seed = 2
	other.EpochSize = EpochFull
	b := mustNew(t, tc, other)
	err := b.Restore(st)
	var fe *FingerprintError
	if !errors.As(err, &fe) || len(fe.Diffs) != 2 {
		t.Fatalf("Restore: %v", err)
	}
	for _, want := range []string{`seed: state "1", now "2"`, `epoch_size: state "4", now "full"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	otherCorpus := oneSampleCorpus(t, 11, 3)
	c := mustNew(t, otherCorpus, cfg)
	if err := c.Restore(st); err == nil || !strings.Contains(err.Error(), "corpus.content") || !strings.Contains(err.Error(), "sequences") {
		t.Errorf("other corpus: %v", err)
	}
	same := cfg
	same.Workers, same.Rank, same.Schedule, same.CutAtSweep = 3, 2, ConstantSchedule(7), true
	d := mustNew(t, tc, same)
	if err := d.Restore(st); err != nil {
		t.Errorf("workers/schedule/cut must not be in the fingerprint: %v", err)
	}
	st.Version = 2
	if err := d.Restore(st); err == nil {
		t.Error("version 2 restored")
	}
	st.Version = 1
	st.Epoch = 9
	if err := d.Restore(st); err == nil || !strings.Contains(err.Error(), "epoch 9") {
		t.Errorf("inconsistent epoch: %v", err)
	}
}

func FuzzDecodeState(f *testing.F) {
	f.Add([]byte(`{"version":1,"position":5,"step":2,"epoch":0,"fingerprint":{"seed":"0"}}`))
	f.Add([]byte(`{"version":1,"position":18446744073709551615,"step":0,"epoch":3,"fingerprint":{}}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := DecodeState(data)
		if err != nil {
			if !errors.Is(err, ErrState) {
				t.Fatalf("error without ErrState: %v", err)
			}
			return
		}
		if st.Version != StateVersion || st.Fingerprint == nil || st.Epoch < 0 {
			t.Fatalf("accepted an invalid state %+v", st)
		}
		enc, err := EncodeState(st)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeState(enc)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", enc, err)
		}
		if back.Position != st.Position || back.Step != st.Step || back.Epoch != st.Epoch || len(back.Fingerprint) != len(st.Fingerprint) {
			t.Fatalf("round trip changed %+v to %+v", st, back)
		}
		for k, v := range st.Fingerprint {
			if back.Fingerprint[k] != v {
				t.Fatalf("fingerprint %q: %q became %q", k, v, back.Fingerprint[k])
			}
		}
	})
}

// TestRefusedRestoreKeepsPosition: a state refused for an inconsistent epoch
// leaves the Source where it was.
func TestRefusedRestoreKeepsPosition(t *testing.T) {
	tc := oneSampleCorpus(t, 10, 3)
	cfg := Config{EpochSize: 4, Schedule: ConstantSchedule(3)}
	cfg.Randomize.Kind = "none"
	want := readN(t, mustNew(t, tc, cfg), 4)
	s := mustNew(t, tc, cfg)
	got := readN(t, s, 2)
	bad := s.State()
	bad.Position, bad.Epoch = 8, 0 // position 8 is in epoch 2
	if err := s.Restore(bad); err == nil || !strings.Contains(err.Error(), "epoch 2") {
		t.Fatalf("Restore: %v", err)
	}
	got = append(got, readN(t, s, 2)...)
	for i := range want {
		if want[i].Start != got[i].Start || want[i].Step != got[i].Step {
			t.Fatalf("minibatch %d: [%d,%d) step %d, want [%d,%d) step %d", i, got[i].Start, got[i].End, got[i].Step, want[i].Start, want[i].End, want[i].Step)
		}
	}
}
