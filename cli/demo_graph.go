package cli

import (
	"fmt"
	"io"
)

func demoGraph(env *Env, w io.Writer, dir string) error {
	fmt.Fprintf(w, "== Part 2: a graph ==\n\n(pending)\n")
	return nil
}
