package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Roles of an edge set (key edge_roles, invariant 9).
const (
	RoleTrain = "train" // trained on
	RoleValid = "valid" // imported, never trained on: for choosing settings
	RoleTest  = "test"  // imported, never trained on: for the final figures
)

// EdgeRoles are the allowed values of edge_roles[i].
var EdgeRoles = []string{RoleTrain, RoleValid, RoleTest}

// EdgeSet is one edge set of a config: edge_paths[Index] with its role.
type EdgeSet struct {
	Index int
	Path  string
	Role  string
	// Name is the last element of the path ("test" for
	// "fb15k-237/test"): what eval --edge-set accepts, with the role.
	Name string
}

func (s EdgeSet) String() string {
	if s.Name == s.Role {
		return fmt.Sprintf("%s (edge_paths[%d])", s.Name, s.Index)
	}
	return fmt.Sprintf("%s (edge_paths[%d], role %s)", s.Name, s.Index, s.Role)
}

// EdgeSets lists every edge set with its role: edge_roles[i], or train for
// all when edge_roles is unset (PBG trains on every edge path).
func (c *Config) EdgeSets() []EdgeSet {
	out := make([]EdgeSet, len(c.EdgePaths))
	for i, p := range c.EdgePaths {
		role := RoleTrain
		if i < len(c.EdgeRoles) {
			role = c.EdgeRoles[i]
		}
		out[i] = EdgeSet{Index: i, Path: p, Role: role, Name: filepath.Base(filepath.Clean(p))}
	}
	return out
}

// TrainingEdgeSets returns the indexes (into edge_paths) of the edge sets
// that training and plan walk, in order.
func (c *Config) TrainingEdgeSets() []int {
	var out []int
	for _, s := range c.EdgeSets() {
		if s.Role == RoleTrain {
			out = append(out, s.Index)
		}
	}
	return out
}

// FindEdgeSet returns the edge set called name: the one whose path ends in
// name, else the only one with role name. An unknown or ambiguous name is
// an error listing the edge sets.
func (c *Config) FindEdgeSet(name string) (EdgeSet, error) {
	sets := c.EdgeSets()
	var byName, byRole []EdgeSet
	for _, s := range sets {
		if s.Name == name || s.Path == name {
			byName = append(byName, s)
		}
		if s.Role == name {
			byRole = append(byRole, s)
		}
	}
	switch {
	case len(byName) == 1:
		return byName[0], nil
	case len(byName) == 0 && len(byRole) == 1:
		return byRole[0], nil
	}
	var all []string
	for _, s := range sets {
		all = append(all, s.String())
	}
	what := "no"
	if len(byName) > 1 || len(byRole) > 1 {
		what = "more than one"
	}
	return EdgeSet{}, fmt.Errorf("%s edge set is called %q; the config's edge sets: %s", what, name, strings.Join(all, ", "))
}

// validateEdgeRoles checks edge_roles: unset, or one known role per edge
// path, at least one of them train.
func (c *Config) validateEdgeRoles() error {
	if c.EdgeRoles == nil {
		return nil
	}
	if len(c.EdgeRoles) != len(c.EdgePaths) {
		return keyErr("edge_roles", "has %d roles for %d edge_paths (one role per edge path, in the same order)", len(c.EdgeRoles), len(c.EdgePaths))
	}
	train := false
	for i, r := range c.EdgeRoles {
		if err := oneOf(fmt.Sprintf("edge_roles[%d]", i), r, EdgeRoles); err != nil {
			return err
		}
		train = train || r == RoleTrain
	}
	if !train {
		return keyErr("edge_roles", "no edge set has the role train (training and plan walk only those)")
	}
	return nil
}
