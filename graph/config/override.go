package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/batchprep/batchprep/internal/plural"
)

// unknownKey starts the message of a key the schema does not have.
const unknownKey = "unknown key"

// ErrBadOverride is what an override that cannot be applied unwraps to: one
// without "=", one naming a key the schema does not have, or a path that
// leads nowhere. On the command line these are usage mistakes; a value out
// of range is not (it is a config error naming the key).
var ErrBadOverride = errors.New("config: bad override")

// WithOverrides returns a copy of c with each "key=value" of sets applied,
// as PBG's -p key=value does: key is a top-level key or a dotted path
// (relations.0.operator, entities.user.num_partitions); value is read as
// JSON when it parses (numbers, true, null, [..]), otherwise as a string.
// The result is validated again; errors name the key (*Error).
func WithOverrides(c *Config, sets []string) (*Config, error) {
	if len(sets) == 0 {
		return c, nil
	}
	var m map[string]any
	if err := json.Unmarshal(c.Canonical(), &m); err != nil {
		return nil, err
	}
	for _, s := range sets {
		key, raw, ok := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, &Error{Key: s, Msg: "override must be key=value", Err: ErrBadOverride}
		}
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			v = raw
		}
		if err := setPath(m, strings.Split(key, "."), v); err != nil {
			return nil, &Error{Key: key, Msg: err.Error(), Err: ErrBadOverride}
		}
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, &Error{Msg: "internal: " + err.Error(), Err: err}
	}
	out, err := Parse(data, "json")
	var ce *Error
	if errors.As(err, &ce) && ce.Err == nil && strings.HasPrefix(ce.Msg, unknownKey) {
		// c itself has only known keys: an unknown one is an override's.
		ce.Err = ErrBadOverride
	}
	return out, err
}

// setPath sets the value at path inside m (maps by key, lists by index).
func setPath(m map[string]any, path []string, v any) error {
	var cur any = m
	for i, p := range path {
		last := i == len(path)-1
		switch node := cur.(type) {
		case map[string]any:
			if last {
				node[p] = v
				return nil
			}
			next, ok := node[p]
			if !ok || next == nil {
				next = map[string]any{}
				node[p] = next
			}
			cur = next
		case []any:
			idx, err := strconv.Atoi(p)
			if err != nil || idx < 0 || idx >= len(node) {
				return fmt.Errorf("no element %s (the list has %s)", p, plural.Count(len(node), "element"))
			}
			if last {
				node[idx] = v
				return nil
			}
			cur = node[idx]
		default:
			return fmt.Errorf("cannot set inside %s, which is not a table", strings.Join(path[:i], "."))
		}
	}
	return nil
}
