package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// A key that takes a list of strings takes a comma list in an override
// (edge_roles=train,valid,test), as well as JSON; a plain value for a key
// that takes tables, or a malformed list, is an error showing the forms
// that work.
func TestOverrideCommaLists(t *testing.T) {
	c, err := Parse([]byte(`
entity_path = "e"
edge_paths = ["x", "y", "z"]
[entities.node]
num_partitions = 1
[[relations]]
name = "r"
lhs = "node"
rhs = "node"
`), "toml")
	if err != nil {
		t.Fatal(err)
	}
	o, err := WithOverrides(c, []string{"edge_roles=train,valid,test", "edge_paths=a, b ,c"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{RoleTrain, RoleValid, RoleTest}; !reflect.DeepEqual(o.EdgeRoles, want) {
		t.Errorf("edge_roles = %q, want %q", o.EdgeRoles, want)
	}
	if want := []string{"a", "b", "c"}; !reflect.DeepEqual(o.EdgePaths, want) {
		t.Errorf("edge_paths = %q, want %q", o.EdgePaths, want)
	}
	o, err = WithOverrides(c, []string{"edge_paths=only"})
	if err != nil || !reflect.DeepEqual(o.EdgePaths, []string{"only"}) {
		t.Errorf("edge_paths=only: %q, %v", o.EdgePaths, err)
	}
	o, err = WithOverrides(c, []string{`edge_paths=["p,q"]`})
	if err != nil || !reflect.DeepEqual(o.EdgePaths, []string{"p,q"}) {
		t.Errorf(`edge_paths=["p,q"] (JSON keeps a comma inside a name): %q, %v`, o.EdgePaths, err)
	}
	for bad, want := range map[string][]string{
		"edge_paths=a,,b":         {"edge_paths", "empty", `'["a","b"]'`},
		"edge_paths=[a,b]":        {"edge_paths", "not a JSON list", `'["a","b"]'`},
		"edge_paths=5":            {"edge_paths", "want a list of strings", "edge_paths=a,b", `'["a","b"]'`},
		"edge_roles=train,nope,x": {"edge_roles[1]", "nope"},
		"relations=r":             {"relations", "JSON", `"name"`, "relations.0.operator="},
		"entities=node":           {"entities", "JSON", "num_partitions", "entities.node.num_partitions="},
	} {
		_, err := WithOverrides(c, []string{bad})
		if err == nil {
			t.Errorf("%s: no error", bad)
			continue
		}
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: %T is not a *config.Error", bad, err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", bad, err, w)
			}
		}
	}
}
