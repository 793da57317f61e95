package coord

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/batchprep/batchprep/graph"
)

// Key layout under a run's prefix /batchprep/runs/RUN/ (docs/distributed.md):
//
//	world              W, written by the first trainer to join
//	lock/P             the rank whose claim holds partition P (under its lease)
//	held/K/L_R         the rank whose claim holds bucket (L,R) of pass K (under its lease)
//	done/K/L_R         bucket (L,R) of pass K is done (the claim number)
//	given/L_R          bucket (L,R) was given in pass 0 (first-pass rule)
//	given-any          some bucket was given in pass 0
//	left/RANK          rank RANK saw the run end
type keys struct{ prefix string }

var runName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)

func newKeys(run string) (keys, error) {
	if !runName.MatchString(run) {
		return keys{}, fmt.Errorf("coord: run name %q: want 1-100 of A-Z a-z 0-9 . _ -", run)
	}
	return keys{prefix: "/batchprep/runs/" + run + "/"}, nil
}

func (k keys) world() string                        { return k.prefix + "world" }
func (k keys) lock(p int) string                    { return k.prefix + "lock/" + strconv.Itoa(p) }
func (k keys) held(pass int, b graph.Bucket) string { return k.heldDir(pass) + bucketName(b) }
func (k keys) heldDir(pass int) string              { return fmt.Sprintf("%sheld/%d/", k.prefix, pass) }
func (k keys) done(pass int, b graph.Bucket) string { return k.doneDir(pass) + bucketName(b) }
func (k keys) doneDir(pass int) string              { return fmt.Sprintf("%sdone/%d/", k.prefix, pass) }
func (k keys) given(b graph.Bucket) string          { return k.givenDir() + bucketName(b) }
func (k keys) givenDir() string                     { return k.prefix + "given/" }
func (k keys) givenAny() string                     { return k.prefix + "given-any" }
func (k keys) left(rank int) string                 { return k.leftDir() + strconv.Itoa(rank) }
func (k keys) leftDir() string                      { return k.prefix + "left/" }

func bucketName(b graph.Bucket) string { return strconv.Itoa(b.Lhs) + "_" + strconv.Itoa(b.Rhs) }

// parseBucket reads the L_R after dir in key.
func parseBucket(key, dir string) (graph.Bucket, error) {
	s, ok := strings.CutPrefix(key, dir)
	l, r, ok2 := strings.Cut(s, "_")
	li, err1 := strconv.Atoi(l)
	ri, err2 := strconv.Atoi(r)
	if !ok || !ok2 || err1 != nil || err2 != nil || li < 0 || ri < 0 {
		return graph.Bucket{}, fmt.Errorf("coord: malformed key %q", key)
	}
	return graph.Bucket{Lhs: li, Rhs: ri}, nil
}
