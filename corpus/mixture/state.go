package mixture

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/batchprep/batchprep/corpus/source"
)

// State is a mixture's checkpoint: the same versioned JSON value as a
// Source's (source.EncodeState, DecodeState, WriteStateFile and
// ReadStateFile read and write it), whose Position counts the mixture's
// samples and whose fingerprint names the mixture (invariant 8).
type State = source.State

// State returns the checkpoint of the position after the last delivered
// minibatch (after a failed Next, the state before that call).
func (m *Mixture) State() State {
	fp := make(map[string]string, len(m.fp))
	for k, v := range m.fp {
		fp[k] = v
	}
	return State{Version: source.StateVersion, Position: m.pos, Step: m.step, Epoch: m.Epoch(), Fingerprint: fp}
}

// Fingerprint returns the fingerprint of the mixture's setup.
func (m *Mixture) Fingerprint() map[string]string { return m.State().Fingerprint }

// fingerprint names everything that shapes the mixture's order: per corpus
// (keys "mix<k>.") its Source's fingerprint (identity, layout, streams,
// the derived seed) and its weight as a reduced fraction of the whole; and
// the mixture's kind, seed, randomizer, window, epoch size and streams. The
// names the user gave are not part of it, nor whether weights were written
// as decimals or sample counts: only their ratios shape the order.
func (m *Mixture) fingerprint(ws []Weight) map[string]string {
	fp := map[string]string{"kind": "mixture", "corpora": strconv.Itoa(len(m.lanes))}
	for k, ln := range m.lanes {
		pre := "mix" + strconv.Itoa(k) + "."
		for key, v := range ln.src.Fingerprint() {
			switch key {
			case "randomize", "window", "epoch_size", "streams":
				continue // the mixture's own, below
			}
			fp[pre+key] = v
		}
		fp[pre+"weight"] = strconv.FormatUint(ln.weight, 10) + "/" + strconv.FormatUint(m.total, 10)
	}
	fp0 := m.lanes[0].src.Fingerprint()
	for _, key := range []string{"randomize", "window", "streams"} {
		fp[key] = fp0[key]
	}
	fp["seed"] = strconv.FormatUint(m.cfg.Randomize.Seed, 10)
	fp["epoch_size"] = m.cfg.EpochSize.String()
	return fp
}

// FingerprintError is returned by Restore when the state was saved by
// another setup (another mixture, or one corpus alone): it names every
// differing field with both values.
type FingerprintError struct {
	Diffs []source.FieldDiff
}

func (e *FingerprintError) Error() string {
	var b strings.Builder
	b.WriteString("mixture: state was saved with a different setup:")
	for _, d := range e.Diffs {
		fmt.Fprintf(&b, " %s: state %q, now %q;", d.Field, d.State, d.Current)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// Restore continues from st: the minibatches that follow are exactly those
// an uninterrupted run gave after the state was taken, for any Workers and
// Rank (invariant 7). A state of another version, another fingerprint, or
// whose epoch does not match its position is refused, and the mixture
// stays where it was.
func (m *Mixture) Restore(st State) error {
	if st.Version != source.StateVersion {
		return fmt.Errorf("mixture: state version %d is not supported (want %d)", st.Version, source.StateVersion)
	}
	if d := source.DiffFingerprints(st.Fingerprint, m.fp); len(d) > 0 {
		return &FingerprintError{d}
	}
	pos, step := m.pos, m.step
	if err := m.Seek(st.Position); err != nil {
		m.Seek(pos)
		m.step = step
		return err
	}
	if m.pos == st.Position {
		if e := m.Epoch(); e != st.Epoch {
			m.Seek(pos)
			m.step = step
			return fmt.Errorf("mixture: state epoch %d does not match position %d, which is in epoch %d", st.Epoch, st.Position, e)
		}
	}
	m.step = st.Step
	return nil
}
