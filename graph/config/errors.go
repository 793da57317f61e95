package config

import "strings"

// Error is a configuration error. Key names the offending key in PBG's
// spelling (relations[1].lhs, entities.user.num_partitions); File is set by
// Load. It unwraps to the underlying syntax error, if any.
type Error struct {
	File string // config file, when loaded from one
	Key  string // offending key; empty for syntax errors
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }
