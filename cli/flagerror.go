package cli

import (
	"flag"
	"fmt"
	"regexp"
	"time"
)

// The flag package's errors, spelled its way ("-epochs", "parse error").
var (
	flagBadValue  = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-(\S+): (.*)$`)
	flagUndefined = regexp.MustCompile(`^flag provided but not defined: -(\S+)$`)
	flagNoValue   = regexp.MustCompile(`^flag needs an argument: -(\S+)$`)
)

// flagError rewrites an error of fs.Parse in batchprep's words: the flag
// as --help writes it, the value given and what the flag wants, instead of
// the flag package's "invalid value ... for flag -x: parse error".
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if m := flagUndefined.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("unknown flag --%s", m[1])
	}
	if m := flagNoValue.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("--%s needs a value", m[1])
	}
	m := flagBadValue.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	value, name, why := m[1], m[2], m[3]
	if why == "parse error" || why == "value out of range" {
		want := "a valid value"
		if fl := fs.Lookup(name); fl != nil {
			if g, ok := fl.Value.(flag.Getter); ok {
				want = flagWants(g.Get())
			}
		}
		if why == "value out of range" {
			return fmt.Sprintf("--%s %q: out of range; want %s", name, value, want)
		}
		why = "want " + want
	}
	return fmt.Sprintf("--%s %q: %s", name, value, why)
}

// flagWants says what a flag whose value is v accepts.
func flagWants(v any) string {
	switch v.(type) {
	case bool:
		return "true or false"
	case int, int64:
		return "an integer"
	case uint, uint64:
		return "an integer >= 0"
	case float64:
		return "a number"
	case time.Duration:
		return "a duration such as 30s or 5m"
	}
	return "a valid value"
}
