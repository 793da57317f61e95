package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/batchprep/batchprep/graph/importer"
)

// demoGraph generates a small graph, imports it and plans it by running the
// real import and plan subcommands, so what it shows is what a user gets.
func demoGraph(env *Env, w io.Writer, dir string) error {
	fmt.Fprintf(w, "== Part 2: a graph (PyTorch-BigGraph batch preparation) ==\n\n")
	edges := filepath.Join(dir, "edges.tsv")
	f, err := os.Create(edges)
	if err != nil {
		return err
	}
	if err := importer.GenerateTSV(f, 600, 2, 40, 1); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	cfgPath := filepath.Join(dir, "graph.toml")
	cfg := fmt.Sprintf(`entity_path = %q
edge_paths = [%q]
checkpoint_path = %q
num_epochs = 2
num_edge_chunks = 1
bucket_order = "inside_out"
workers = 2
batch_size = 50
eval_fraction = 0.1
seed = 0

[entities.node]
num_partitions = 3

[[relations]]
name = "r0"
lhs = "node"
rhs = "node"

[[relations]]
name = "r1"
lhs = "node"
rhs = "node"
`, filepath.Join(dir, "entities"), filepath.Join(dir, "edges"), filepath.Join(dir, "ckpt"))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "The demo generated 600 edges over 40 entities and 2 relations (lines like\n")
	fmt.Fprintf(w, "\"e12<TAB>r1<TAB>e7\") and a config in PBG's key names: 3 partitions, bucket order\n")
	fmt.Fprintf(w, "inside_out, 2 Hogwild workers, batches of 50, 10%% held out for evaluation, 2 epochs.\n\n")

	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		sub := &Env{Ctx: env.Ctx, Stdin: env.Stdin, Stdout: &out, Stderr: &errOut}
		var err error
		switch args[0] {
		case "import":
			err = runImport(sub, args[1:])
		case "plan":
			err = runPlan(sub, args[1:])
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w\n%s", args[0], err, errOut.String())
		}
		return out.String(), nil
	}
	if _, err := run("import", "--quiet", "--config", cfgPath, "--lhs-col", "0", "--rel-col", "1", "--rhs-col", "2", edges); err != nil {
		return err
	}
	fmt.Fprintf(w, "$ batchprep import --config graph.toml --lhs-col 0 --rel-col 1 --rhs-col 2 edges.tsv\n")
	fmt.Fprintf(w, "  wrote one file per bucket (3 x 3 = 9, empty ones included), entity dictionaries\n")
	fmt.Fprintf(w, "  (names kept), each edge with its line ordinal.\n\n")

	text, err := run("plan", "--quiet", "--config", cfgPath, "--format", "text")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "$ batchprep plan --config graph.toml --format text   (first pass shown)\n\n")
	printFirstPass(w, text)

	full, err := run("plan", "--quiet", "--config", cfgPath, "--format", "jsonl")
	if err != nil {
		return err
	}
	state := filepath.Join(dir, "plan-state.json")
	head, err := run("plan", "--quiet", "--config", cfgPath, "--format", "jsonl", "--max-batches", "7", "--state-out", state)
	if err != nil {
		return err
	}
	tail, err := run("plan", "--quiet", "--config", cfgPath, "--format", "jsonl", "--state-in", state)
	if err != nil {
		return err
	}
	st, err := os.ReadFile(state)
	if err != nil {
		return err
	}
	joined := head + dropResumedBucketLine(tail)
	same := joined == full
	fmt.Fprintf(w, "\nThe JSONL plan lists, per bucket, its holdout (edge ordinals) and each worker's\n")
	fmt.Fprintf(w, "batches. Stopped after 7 batches (--max-batches 7 --state-out), the state is:\n\n    %s\n\n",
		strings.TrimSpace(string(st)))
	fmt.Fprintf(w, "Resumed with --state-in, the rest of the plan joined to the first 7 batches is\n")
	fmt.Fprintf(w, "byte-for-byte the uninterrupted plan (%d lines): %v\n", strings.Count(full, "\n"), same)
	if !same {
		return fmt.Errorf("resumed plan differs from the uninterrupted one")
	}
	fmt.Fprintf(w, "\nEvery shuffle, holdout and bucket order is derived from (seed, epoch, edge set,\n")
	fmt.Fprintf(w, "chunk, bucket, worker): the same config and data give the same batches anywhere.\n")
	return nil
}

// printFirstPass prints the text plan up to the start of its second pass.
func printFirstPass(w io.Writer, text string) {
	sc := bufio.NewScanner(strings.NewReader(text))
	passes := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(strings.ToLower(line)), "pass ") || strings.HasPrefix(strings.ToLower(line), "epoch ") {
			passes++
			if passes > 1 {
				break
			}
		}
		fmt.Fprintf(w, "    %s\n", line)
	}
}

// dropResumedBucketLine removes the repeated bucket line ("resumed":true)
// that a resumed plan prints first.
func dropResumedBucketLine(s string) string {
	first, rest, ok := strings.Cut(s, "\n")
	if ok && strings.Contains(first, `"resumed":true`) {
		return rest
	}
	return s
}
