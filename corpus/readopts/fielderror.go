package readopts

import "strings"

// FieldError is a choice that cannot work. Field is the first field it
// names, in flag form ("window-chunks").
type FieldError struct {
	Field string
	msg   string // each field written as {name}
}

func fieldErrorf(field, msg string) *FieldError { return &FieldError{Field: field, msg: msg} }

// Render spells the message with name(field) for each field it mentions.
func (e *FieldError) Render(name func(field string) string) string {
	var b strings.Builder
	s := e.msg
	for {
		i := strings.IndexByte(s, '{')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(s[i+1:], '}')
		}
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(name(s[i+1 : i+1+j]))
		s = s[i+2+j:]
	}
}

// Error spells fields as flags: "--window-chunks 0: must be >= 1".
func (e *FieldError) Error() string { return e.Render(FlagName) }

// FlagName spells a field as a command-line flag.
func FlagName(field string) string { return "--" + field }

// RequestName spells a field as the field of a gRPC SequenceRequest
// ("window_chunks"; the state given to resume from is "state").
func RequestName(field string) string {
	if field == "state-in" {
		return "state"
	}
	return strings.ReplaceAll(field, "-", "_")
}
