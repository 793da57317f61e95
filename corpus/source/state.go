package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/batchprep/batchprep/internal/atomicfile"
	"github.com/batchprep/batchprep/internal/jsonmsg"
)

// StateVersion is the state format this package writes and reads.
const StateVersion = 1

// State is a checkpoint of a Source: where the next minibatch starts and a
// fingerprint of everything that shapes the order. Workers and rank are not
// part of it, so one state serves every rank and any W.
type State struct {
	Version  int    `json:"version"`
	Position uint64 `json:"position"`
	Step     uint64 `json:"step"`
	// Epoch is the epoch of the next minibatch, which also selects the
	// schedule entry; Restore checks it against the position.
	Epoch       int               `json:"epoch"`
	Fingerprint map[string]string `json:"fingerprint"`
}

// State returns the checkpoint of the position after the last delivered
// minibatch. After a failed Next it is still the state before that call.
func (s *Source) State() State {
	fp := make(map[string]string, len(s.fp))
	for k, v := range s.fp {
		fp[k] = v
	}
	return State{Version: StateVersion, Position: s.pos, Step: s.step, Epoch: s.Epoch(), Fingerprint: fp}
}

// Fingerprint returns the fingerprint of this Source's setup.
func (s *Source) Fingerprint() map[string]string { return s.State().Fingerprint }

// FieldDiff is one fingerprint field that differs between a state and the
// current setup ("(absent)" when one side lacks it).
type FieldDiff struct {
	Field, State, Current string
}

// FingerprintError is returned by Restore when the state was made by a
// different setup; it names every differing field with both values.
type FingerprintError struct {
	Diffs []FieldDiff
}

func (e *FingerprintError) Error() string {
	var b strings.Builder
	b.WriteString("source: state was saved with a different setup:")
	for _, d := range e.Diffs {
		fmt.Fprintf(&b, " %s: state %q, now %q;", d.Field, d.State, d.Current)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// DiffFingerprints lists the fields whose values differ between a state's
// fingerprint and the current one, sorted by field name: what a
// FingerprintError reports. Setups built on Sources (corpus/mixture) use it
// to refuse a state the same way.
func DiffFingerprints(state, current map[string]string) []FieldDiff {
	return diffFingerprints(state, current)
}

func diffFingerprints(state, current map[string]string) []FieldDiff {
	keys := map[string]bool{}
	for k := range state {
		keys[k] = true
	}
	for k := range current {
		keys[k] = true
	}
	var diffs []FieldDiff
	for k := range keys {
		a, okA := state[k]
		b, okB := current[k]
		if okA && okB && a == b {
			continue
		}
		if !okA {
			a = "(absent)"
		}
		if !okB {
			b = "(absent)"
		}
		diffs = append(diffs, FieldDiff{k, a, b})
	}
	sort.Slice(diffs, func(i, j int) bool { return diffs[i].Field < diffs[j].Field })
	return diffs
}

// Restore continues from st: the minibatches that follow are exactly those
// an uninterrupted run would have given after the state was taken. A
// position inside a sequence moves to the next sequence boundary. A state of
// another version, with a different fingerprint or with an epoch that does
// not match its position is refused, and the Source stays where it was.
func (s *Source) Restore(st State) error {
	if st.Version != StateVersion {
		return fmt.Errorf("source: state version %d is not supported (want %d)", st.Version, StateVersion)
	}
	if d := diffFingerprints(st.Fingerprint, s.fp); len(d) > 0 {
		return &FingerprintError{d}
	}
	saved := s.walk
	if err := s.Seek(st.Position); err != nil {
		return err
	}
	if s.pos == st.Position {
		if e := s.Epoch(); e != st.Epoch {
			s.walk = saved // a refused state leaves the Source where it was
			return fmt.Errorf("source: state epoch %d does not match position %d, which is in epoch %d", st.Epoch, st.Position, e)
		}
	}
	s.step = st.Step
	return nil
}

// ErrState is wrapped by every state decoding error.
var ErrState = errors.New("source: bad state")

// EncodeState returns st as one line of JSON.
func EncodeState(st State) ([]byte, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("source: encode state: %w", err)
	}
	return append(b, '\n'), nil
}

// DecodeState parses a state strictly: one JSON object with exactly the
// fields of State, all present, a supported version, nothing after it.
func DecodeState(data []byte) (State, error) {
	var raw struct {
		Version     *int              `json:"version"`
		Position    *uint64           `json:"position"`
		Step        *uint64           `json:"step"`
		Epoch       *int              `json:"epoch"`
		Fingerprint map[string]string `json:"fingerprint"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return State{}, fmt.Errorf("%w: truncated or empty JSON", ErrState)
		}
		return State{}, fmt.Errorf("%w: %s", ErrState, jsonmsg.Describe(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return State{}, fmt.Errorf("%w: unexpected data after the JSON object", ErrState)
	}
	switch {
	case raw.Version == nil:
		return State{}, fmt.Errorf("%w: missing field \"version\"", ErrState)
	case *raw.Version != StateVersion:
		return State{}, fmt.Errorf("%w: version %d is not supported (want %d)", ErrState, *raw.Version, StateVersion)
	case raw.Position == nil:
		return State{}, fmt.Errorf("%w: missing field \"position\"", ErrState)
	case raw.Step == nil:
		return State{}, fmt.Errorf("%w: missing field \"step\"", ErrState)
	case raw.Epoch == nil:
		return State{}, fmt.Errorf("%w: missing field \"epoch\"", ErrState)
	case *raw.Epoch < 0:
		return State{}, fmt.Errorf("%w: negative epoch %d", ErrState, *raw.Epoch)
	case raw.Fingerprint == nil:
		return State{}, fmt.Errorf("%w: missing field \"fingerprint\"", ErrState)
	}
	return State{Version: *raw.Version, Position: *raw.Position, Step: *raw.Step, Epoch: *raw.Epoch, Fingerprint: raw.Fingerprint}, nil
}

// ReadStateFile reads and strictly decodes a state file.
func ReadStateFile(path string) (State, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return State{}, fmt.Errorf("source: read state: %w", err)
	}
	st, err := DecodeState(data)
	if err != nil {
		return State{}, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// WriteStateFile writes st atomically: a temporary file in the same
// directory, fsync, rename, then fsync of the directory. A crash leaves the
// old file or the new one, never a mix.
func WriteStateFile(path string, st State) error {
	data, err := EncodeState(st)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return fmt.Errorf("source: write state %s: %w", path, err)
	}
	return nil
}
