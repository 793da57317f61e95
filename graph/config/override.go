package config

import (
	"encoding/json"
	"strconv"
	"strings"
)

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
			return nil, &Error{Key: s, Msg: "override must be key=value"}
		}
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			v = raw
		}
		if err := setPath(m, strings.Split(key, "."), v); err != nil {
			return nil, &Error{Key: key, Msg: err.Error()}
		}
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return Parse(data, "json")
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
				return &json.UnsupportedValueError{Str: "no element " + p + " (list of " + strconv.Itoa(len(node)) + ")"}
			}
			if last {
				node[idx] = v
				return nil
			}
			cur = node[idx]
		default:
			return &json.UnsupportedValueError{Str: "cannot set inside a " + strings.Join(path[:i], ".") + " that is not a table"}
		}
	}
	return nil
}
