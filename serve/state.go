package serve

import (
	"encoding/json"
	"strconv"

	"github.com/batchprep/batchprep/corpus/source"
)

// stateEncoder writes a call's states as source.EncodeState does, byte for
// byte, with the fingerprint (constant for a source or a mixture) encoded
// once: a state per minibatch then costs a few appends instead of a map
// copy and a JSON encoding of it.
type stateEncoder struct {
	fingerprint []byte
	// reuse makes encode write every state into buf, for a caller that
	// copies what it keeps before the next one (columns messages).
	reuse bool
	buf   []byte
}

// positioned is what a state is made of: a source.Source or a
// mixture.Mixture.
type positioned interface {
	Fingerprint() map[string]string
	Position() uint64
	Epoch() int
}

func newStateEncoder(src positioned) (*stateEncoder, error) {
	fp, err := json.Marshal(src.Fingerprint())
	if err != nil {
		return nil, err
	}
	return &stateEncoder{fingerprint: fp}, nil
}

// encode returns the state after mb, src's last minibatch, in a new slice
// (with reuse, in the slice of the previous call).
func (e *stateEncoder) encode(src positioned, mb *source.Minibatch) []byte {
	pos, step := src.Position(), mb.Step+1
	var b []byte
	if e.reuse {
		b = e.buf[:0]
	} else {
		b = make([]byte, 0, 64+len(e.fingerprint))
	}
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, int64(source.StateVersion), 10)
	b = append(b, `,"position":`...)
	b = strconv.AppendUint(b, pos, 10)
	b = append(b, `,"step":`...)
	b = strconv.AppendUint(b, step, 10)
	b = append(b, `,"epoch":`...)
	b = strconv.AppendInt(b, int64(src.Epoch()), 10)
	b = append(b, `,"fingerprint":`...)
	b = append(b, e.fingerprint...)
	b = append(b, "}\n"...)
	if e.reuse {
		e.buf = b
	}
	return b
}
