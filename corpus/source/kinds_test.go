package source

import "testing"

// TestKindsAvailable records which randomizers the property tests cover; all
// three exist once randomize's cntk and window have landed.
func TestKindsAvailable(t *testing.T) {
	k := kinds()
	t.Logf("randomizer kinds under test: %v", k)
	if len(k) != 3 {
		t.Errorf("property tests cover only %v; want none, cntk and window", k)
	}
}
