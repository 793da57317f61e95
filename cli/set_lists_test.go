package cli

import (
	"strings"
	"testing"
)

// --set takes a comma list for edge_paths and edge_roles, on any command;
// a plain value for a key that takes tables says the JSON form.
func TestSetCommaLists(t *testing.T) {
	_, cfg := edgeSetsFixture(t, "")
	code, out, errOut := run(t, "plan", "--config", cfg, "--format", "summary", "--set", "edge_roles=train,valid,test")
	if code != 0 || !strings.Contains(out, "buckets") {
		t.Errorf("plan --set edge_roles=train,valid,test: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = run(t, "plan", "--config", cfg, "--set", "relations=all")
	if code != 1 || !strings.Contains(errOut, "relations: want a list of relation tables") || !strings.Contains(errOut, "JSON") {
		t.Errorf("plan --set relations=all: exit %d\n%s", code, errOut)
	}
}
