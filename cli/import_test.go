package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
)

// importFixture writes the contract checker's plan input (check.py
// check_plan): 500 edges over 2 relations, a comment line, 2 partitions.
func importFixture(t *testing.T) (dir, cfg, tsv string) {
	t.Helper()
	dir = t.TempDir()
	tsv = filepath.Join(dir, "edges.tsv")
	var b strings.Builder
	b.WriteString("# a comment line\n")
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&b, "a%d\tr%d\tb%d\n", i%37, i%2, (i*7)%41)
	}
	os.WriteFile(tsv, []byte(b.String()), 0o644)
	cfg = filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`entity_path = "%[1]s/ent"
edge_paths = ["%[1]s/edges"]
checkpoint_path = "%[1]s/ckpt"
num_epochs = 1
workers = 2
batch_size = 50
eval_fraction = 0.1
seed = 0

[entities.node]
num_partitions = 2

[[relations]]
name = "r0"
lhs = "node"
rhs = "node"
operator = "none"

[[relations]]
name = "r1"
lhs = "node"
rhs = "node"
operator = "none"
`, dir)), 0o644)
	return dir, cfg, tsv
}

func TestImportContractInvocation(t *testing.T) {
	_, cfgPath, tsv := importFixture(t)
	code, out, errOut := run(t, "import", "--config", cfgPath, "--lhs-col", "0", "--rel-col", "1", "--rhs-col", "2", tsv)
	if code != 0 {
		t.Fatalf("code %d, stderr %s", code, errOut)
	}
	if out != "" {
		t.Errorf("import wrote to stdout: %q", out)
	}
	for _, want := range []string{"import: 500 edges in 1 edge set,", "78 entities", "2 relations", "2x2 buckets", "0 bad lines skipped", "1 comment or empty", "entities: node 78"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("summary lacks %q:\n%s", want, errOut)
		}
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	st, err := edgestore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	total := 0
	for l := 0; l < 2; l++ {
		for r := 0; r < 2; r++ {
			n, err := st.NumEdges(0, graph.Bucket{Lhs: l, Rhs: r})
			if err != nil {
				t.Fatal(err)
			}
			total += n
		}
	}
	if total != 500 {
		t.Errorf("%d edges stored", total)
	}
}

func TestImportErrors(t *testing.T) {
	dir, cfgPath, tsv := importFixture(t)
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{tsv}, 2, "--config is required"},
		{[]string{"--config", cfgPath}, 2, "no input FILE"},
		{[]string{"--config", cfgPath, "--delimiter", "pipe", tsv}, 2, "--delimiter"},
		{[]string{"--config", cfgPath, "--rel-col", "0", tsv}, 2, "both column 0"},
		{[]string{"--config", cfgPath, tsv, tsv}, 2, "2 input files for 1 edge_paths"},
		{[]string{"--config", filepath.Join(dir, "absent.toml"), tsv}, 1, "absent.toml"},
		// Relation names r0/r1 as entity columns: column 1 is not a known relation when rel-col is 2.
		{[]string{"--config", cfgPath, "--rel-col", "2", "--rhs-col", "1", tsv}, 1, tsv + ":2:"},
	}
	for _, c := range cases {
		code, _, errOut := run(t, append([]string{"import"}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: code %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.msg)
		}
	}
	// A budget large enough skips and reports the bad lines.
	code, _, errOut := run(t, "import", "--config", cfgPath, "--rel-col", "2", "--rhs-col", "1", "--max-errors", "500", tsv)
	if code != 0 || !strings.Contains(errOut, "import: 0 edges") || !strings.Contains(errOut, "500 bad lines skipped") ||
		!strings.Contains(errOut, "unknown relation 500") || !strings.Contains(errOut, "(480 more)") {
		t.Errorf("all-bad import: code %d, %s", code, errOut)
	}
}

func TestImportSkipsWithinBudget(t *testing.T) {
	_, cfgPath, tsv := importFixture(t)
	f, _ := os.OpenFile(tsv, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("x\tr9\ty\nonly-two\tfields\n")
	f.Close()
	code, _, errOut := run(t, "import", "--config", cfgPath, "--rel-col", "1", tsv)
	if code != 1 || !strings.Contains(errOut, tsv+":502:3: unknown relation") {
		t.Fatalf("budget 0: code %d, %s", code, errOut)
	}
	code, _, errOut = run(t, "import", "--config", cfgPath, "--rel-col", "1", "--max-errors", "2", tsv)
	if code != 0 || !strings.Contains(errOut, "2 bad lines skipped") || !strings.Contains(errOut, "unknown relation 1, wrong column count 1") ||
		!strings.Contains(errOut, tsv+":503: wrong column count") {
		t.Fatalf("budget 2: code %d, %s", code, errOut)
	}
}

// An interrupted import (env.Ctx cancelled) leaves no data behind.
func TestImportInterrupted(t *testing.T) {
	dir, cfgPath, tsv := importFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var o, e bytes.Buffer
	err := runImport(&Env{Ctx: ctx, Stdin: strings.NewReader(""), Stdout: &o, Stderr: &e}, []string{"--config", cfgPath, "--rel-col", "1", tsv})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	for _, p := range []string{"ent", "edges"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s exists after an interrupted import", p)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, x := range ents {
		if strings.HasPrefix(x.Name(), ".") {
			t.Errorf("left behind: %s", x.Name())
		}
	}
}
