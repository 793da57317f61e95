package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// positionKeys are the state fields whose digits may change into another
// valid state: states carry no checksum, so a flipped digit there is a
// valid state of the same setup at another position (docs/reliability.md).
var positionKeys = map[string]bool{"position": true, "step": true, "epoch": true,
	"edge_set": true, "chunk": true, "index": true, "worker": true, "batch": true}

var lastKey = regexp.MustCompile(`"([a-z_]+)":[^"]*$`)

// For state files: every damage to a read or
// plan state (delete, truncate, empty, another setup's state, a flipped
// bit at every byte) is refused by the command that resumes from it, and by
// verify, with an error naming the file; the only flips accepted are digits
// of a position field that make another valid position of the same setup.
func TestCorruptStatesDetected(t *testing.T) {
	f := newBigFixture(t, 400, 2000)
	cfg := filepath.Join(f.dir, f.bigCfg)
	corpus := filepath.Join(f.dir, f.corpus)
	if code, _, e := run(t, "import", "--config", cfg, "--rel-col", "1", "--quiet", filepath.Join(f.dir, f.edges)); code != 0 {
		t.Fatal(e)
	}
	readArgs := []string{"read", corpus, "--stream", "x:2", "--mb", "7", "--quiet", "--epochs", "3"}
	planArgs := []string{"plan", "--config", cfg, "--quiet"}
	for _, c := range []struct {
		name, kind  string
		args, other []string // the resuming command; a command writing another setup's state
	}{
		{"read", "read", readArgs, []string{"read", corpus, "--stream", "x:2", "--mb", "7", "--quiet", "--seed", "5", "--max-minibatches", "10"}},
		{"plan", "plan", planArgs, []string{"plan", "--config", cfg, "--quiet", "--max-batches", "10"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := filepath.Join(t.TempDir(), "st.json")
			limit := map[string]string{"read": "--max-minibatches", "plan": "--max-batches"}[c.kind]
			if code, _, e := run(t, append(c.args, limit, "30", "--state-out", st)...); code != 0 {
				t.Fatal(e)
			}
			orig := must(os.ReadFile(st))
			otherSt := filepath.Join(t.TempDir(), "other.json")
			if c.kind == "plan" {
				// Another setup: the same store planned in batches of 3.
				o := filepath.Join(f.dir, "batch3.toml")
				os.WriteFile(o, []byte(strings.Replace(string(must(os.ReadFile(cfg))), "batch_size = 5", "batch_size = 3", 1)), 0o644)
				c.other = []string{"plan", "--config", o, "--quiet", "--max-batches", "10"}
			}
			if code, _, e := run(t, append(c.other, "--state-out", otherSt)...); code != 0 {
				t.Fatal(e)
			}
			other := must(os.ReadFile(otherSt))
			check := func(what string, accepted func() bool) {
				t.Helper()
				code, _, errOut := run(t, append(c.args, "--state-in", st)...)
				checkMessages(t, errOut)
				if code == 0 {
					if accepted == nil || !accepted() {
						t.Errorf("%s: %s --state-in accepted the damaged state", what, c.name)
					}
					return
				}
				if code != 1 || !strings.Contains(errOut, st) {
					t.Errorf("%s: exit %d, stderr %q does not name %s", what, code, errOut, st)
				}
				if c.kind == "read" && (strings.Contains(errOut, "different setup") || strings.Contains(errOut, "does not match position")) {
					// verify checks a read state's form; its fingerprint and
					// its epoch are checked against the corpus by read.
					return
				}
				code, out, _ := run(t, "verify", "--"+c.kind+"-state", st, "--config", cfg)
				checkMessages(t, out)
				if code != 1 || !strings.Contains(out, "problem") {
					t.Errorf("%s: verify exit %d: %s", what, code, out)
				}
			}
			for _, d := range damages() {
				if err := d.apply(st, orig, other); err != nil {
					t.Fatal(err)
				}
				if d.name == "truncate by one" {
					continue // drops the final newline: the same state
				}
				check(d.name, nil)
			}
			accepted := 0
			for i := range orig {
				b := append([]byte(nil), orig...)
				b[i] ^= 1
				os.WriteFile(st, b, 0o644)
				m := lastKey.FindSubmatch(orig[:i+1])
				check("flip byte "+itoa(i), func() bool {
					ok := orig[i] >= '0' && orig[i] <= '9' && b[i] >= '0' && b[i] <= '9' && m != nil && positionKeys[string(m[1])]
					if ok {
						accepted++
					}
					return ok
				})
			}
			t.Logf("%d bytes, %d flips accepted as another valid position", len(orig), accepted)
		})
	}
}
