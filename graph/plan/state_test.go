package plan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sampleState() State {
	return State{Version: StateVersion, Position: Position{Epoch: 1, EdgeSet: 0, Chunk: 2, Index: 5, Worker: 1, Batch: 3},
		Fingerprint: Fingerprint{Seed: 1<<63 + 5, BucketOrder: "inside_out", NumEdgeChunks: 3, Workers: 2,
			BatchSize: 1000, EvalFraction: 0.05, Partitions: [2]int{4, 4}, EdgeSets: 1, Store: "abc"}}
}

func TestStateRoundTrip(t *testing.T) {
	s := sampleState()
	got, err := DecodeState(s.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if *got != s {
		t.Fatalf("round trip: %+v, want %+v", *got, s)
	}
	if !strings.Contains(string(s.Encode()), `"version":1`) {
		t.Fatalf("encoding lacks version: %s", s.Encode())
	}
}

func TestStateMalformed(t *testing.T) {
	good := string(sampleState().Encode())
	cases := map[string]string{
		"empty":       "",
		"truncated":   good[:len(good)/2],
		"not object":  "[1,2]",
		"trailing":    good + "{}",
		"unknown key": strings.Replace(good, `"version":1`, `"version":1,"extra":2`, 1),
		"version":     strings.Replace(good, `"version":1`, `"version":2`, 1),
		"no version":  strings.Replace(good, `"version":1,`, ``, 1),
		"negative":    strings.Replace(good, `"epoch":1`, `"epoch":-1`, 1),
		"missing pos": strings.Replace(good, `"batch":3`, `"batch_x":3`, 1),
		"no store":    strings.Replace(good, `,"store":"abc"`, ``, 1),
		"wrong type":  strings.Replace(good, `"workers":2`, `"workers":"2"`, 1),
	}
	for name, in := range cases {
		if _, err := DecodeState([]byte(in)); !errors.Is(err, ErrState) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestStateFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.state")
	s := sampleState()
	if err := WriteStateFile(path, s); err != nil {
		t.Fatal(err)
	}
	s.Position.Batch++
	if err := WriteStateFile(path, s); err != nil {
		t.Fatal(err)
	}
	got, err := ReadStateFile(path)
	if err != nil || *got != s {
		t.Fatalf("read back %+v, %v", got, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
	os.WriteFile(path, []byte("{"), 0o644)
	if _, err := ReadStateFile(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("malformed file: %v", err)
	}
	if err := WriteStateFile(filepath.Join(dir, "no", "such", "dir"), s); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
}

func FuzzDecodeState(f *testing.F) {
	f.Add(sampleState().Encode())
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":1,"position":{},"fingerprint":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeState(data)
		if err != nil {
			if !errors.Is(err, ErrState) {
				t.Fatalf("error without ErrState: %v", err)
			}
			return
		}
		p := s.Position
		if p.Epoch < 0 || p.EdgeSet < 0 || p.Chunk < 0 || p.Index < 0 || p.Worker < 0 || p.Batch < 0 {
			t.Fatalf("negative position accepted: %+v", p)
		}
		again, err := DecodeState(s.Encode())
		if err != nil || *again != *s {
			t.Fatalf("re-encoding changes the state: %+v %v", again, err)
		}
	})
}
