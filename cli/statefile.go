package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// stateKind tells the state files of read and plan apart, so that one given
// to the other command gets a message that says so instead of a JSON
// decoding error: a read state's "position" is a number, a plan state's an
// object. It returns "" when the file is not such a JSON object (the
// command's own decoder then reports what is wrong).
func stateKind(data []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return ""
	}
	p := bytes.TrimSpace(m["position"])
	switch {
	case len(p) == 0:
		return ""
	case p[0] == '{':
		return "plan"
	case p[0] >= '0' && p[0] <= '9':
		return "read"
	}
	return ""
}

// checkStateKind returns an error naming path when the state file there was
// written by another command than want.
func checkStateKind(path, want string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil // the command's own reader reports it, naming the file
	}
	if k := stateKind(data); k != "" && k != want {
		return fmt.Errorf("%s: this is a state of 'batchprep %s', not of 'batchprep %s'; give %s --state-in a state its own --state-out wrote", path, k, want, want)
	}
	return nil
}
