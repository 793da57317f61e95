package config

import (
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/config.md")

// Every key of the schema is documented, in a known group, and nothing else
// is: the reference cannot miss a key or describe one that does not exist.
func TestKeysDocumented(t *testing.T) {
	top, ent, rel := documentedKeys()
	if !reflect.DeepEqual(top, sortedKeys(topKeys)) {
		t.Errorf("documented top-level keys differ from the schema:\n%v\n%v", top, sortedKeys(topKeys))
	}
	if !reflect.DeepEqual(ent, sortedKeys(entityKeys)) || !reflect.DeepEqual(rel, sortedKeys(relationKeys)) {
		t.Errorf("documented entity/relation keys differ from the schema")
	}
	groups := map[string]bool{}
	for _, g := range keyGroups {
		groups[g.name] = true
	}
	for k, d := range topDocs {
		if !groups[d.group] || strings.TrimSpace(d.help) == "" {
			t.Errorf("%s: group %q, help %q", k, d.group, d.help)
		}
	}
}

// docs/config.md is exactly Reference(): the page is generated from the
// schema and the defaults (-update rewrites it).
func TestReference(t *testing.T) {
	const path = "../../docs/config.md"
	want := Reference()
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is out of date: go test ./graph/config -run TestReference -update", path)
	}
	// Spot checks that the defaults come from the code.
	for _, s := range []string{"| `batch_size` | an integer | `1000` |", "| `bucket_order` | a string | `\"inside_out\"` |",
		"| `checkpoint_path` | a string | none |", "| `workers` | an integer | unset |", "| `weight` | a number | `1` |"} {
		if !strings.Contains(string(want), s) {
			t.Errorf("reference lacks %q", s)
		}
	}
}
