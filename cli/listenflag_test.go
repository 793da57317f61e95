package cli

import (
	"errors"
	"testing"
)

// A bad listen address is a usage mistake naming the flag and the value.
func TestCheckListen(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:0":     "",
		"[::1]:7411":      "",
		":7411":           "",
		"localhost:2379":  "",
		"nope":            `--listen "nope": want host:port, e.g. 127.0.0.1:7411 (port 0: any free port)`,
		"127.0.0.1:99999": `--listen "127.0.0.1:99999": the port "99999" is not a number from 0 to 65535`,
		"127.0.0.1:http":  `--listen "127.0.0.1:http": the port "http" is not a number from 0 to 65535`,
		"::1:7411":        `--listen "::1:7411": want host:port`,
	} {
		err := checkListen("--listen", addr)
		var ue *UsageError
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", addr, err)
		case want != "" && (!errors.As(err, &ue) || len(ue.Msg) < len(want) || ue.Msg[:len(want)] != want):
			t.Errorf("%s: %v, want a usage error %q", addr, err, want)
		}
	}
}
