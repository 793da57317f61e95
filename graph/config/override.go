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
// JSON when it parses (numbers, true, null, [..]); for edge_paths and
// edge_roles, a comma list (edge_roles=train,valid,test) is also a list;
// otherwise the value is a string.
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
		path := strings.Split(key, ".")
		v, err := overrideValue(path, raw)
		if err != nil {
			return nil, err
		}
		if err := setPath(m, path, v); err != nil {
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
	if ce != nil && ce.Err == nil && topKeys[ce.Key].kind == kStringList && overridden(sets, ce.Key) {
		// A list key given a value of another JSON type (edge_paths=5).
		ce.Msg += fmt.Sprintf(" (on the command line: %s=a,b or the JSON form %s='[\"a\",\"b\"]')", ce.Key, ce.Key)
	}
	return out, err
}

// overridden reports whether one of sets gives key.
func overridden(sets []string, key string) bool {
	for _, s := range sets {
		if k, _, _ := strings.Cut(s, "="); strings.TrimSpace(k) == key {
			return true
		}
	}
	return false
}

// overrideValue reads the value of one override of the key at path: JSON
// when it parses; for a key that takes a list of strings (edge_paths,
// edge_roles), a comma-separated list (train,valid,test); otherwise the
// text as a string. A key that takes a list of tables (relations) or a
// table (entities) given plain text is an error showing the JSON form.
func overrideValue(path []string, raw string) (any, error) {
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err == nil {
		return v, nil
	}
	if len(path) != 1 {
		return raw, nil
	}
	key := path[0]
	switch topKeys[key].kind {
	case kStringList:
		if strings.HasPrefix(strings.TrimSpace(raw), "[") {
			return nil, &Error{Key: key, Msg: fmt.Sprintf("%s is not a JSON list (quote each element: %s='[\"a\",\"b\"]', or write the comma list %s=a,b)", raw, key, key)}
		}
		var l []any
		for i, e := range strings.Split(raw, ",") {
			e = strings.TrimSpace(e)
			if e == "" {
				return nil, &Error{Key: key, Msg: fmt.Sprintf("element %d of the comma list %q is empty (write a,b,c, or the JSON form %s='[\"a\",\"b\"]')", i, raw, key)}
			}
			l = append(l, e)
		}
		return l, nil
	case kRelations:
		return nil, &Error{Key: key, Msg: fmt.Sprintf("want a list of relation tables, got %q; write it as JSON: %s='[{\"name\":\"r\",\"lhs\":\"node\",\"rhs\":\"node\"}]', or set one field: relations.0.operator=translation", raw, key)}
	case kEntities:
		return nil, &Error{Key: key, Msg: fmt.Sprintf("want a table of entity types, got %q; write it as JSON: %s='{\"node\":{\"num_partitions\":1}}', or set one field: entities.node.num_partitions=4", raw, key)}
	}
	return raw, nil
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
