package pqframe

import (
	"bytes"
	"errors"
	"testing"
)

// TestCheck: each broken frame is named, and a sound one passes.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		data   string
		want   string
		footer bool
	}{
		{"PAR1xyzw\x04\x00\x00\x00PAR1", "", false},
		{"PAR1PAR1", "8 bytes, shorter than the format's frame", false},
		{"PAR1" + "\x00\x00\x00\x00\x00\x00\x00\x00" + "PAR", "no PAR1 magic at its start and end", false},
		{"XXXX" + "\x00\x00\x00\x00" + "\x00\x00\x00\x00PAR1", "no PAR1 magic at its start and end", false},
		{"PAR1\x15\x06\x154\x15F\x15\xf5\x8e\x85\xc6PAR1", "its footer claims 3330641653 bytes of a 19-byte file", true},
		{"PAR1xyzw\x05\x00\x00\x00PAR1", "its footer claims 5 bytes of a 16-byte file", true},
	} {
		err := Check(bytes.NewReader([]byte(c.data)), int64(len(c.data)))
		var fe *Error
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v, want a sound frame", c.data, err)
		case c.want != "" && (!errors.As(err, &fe) || fe.Msg != c.want || fe.Footer != c.footer):
			t.Errorf("%q: %v, want %q (footer %v)", c.data, err, c.want, c.footer)
		}
	}
}
