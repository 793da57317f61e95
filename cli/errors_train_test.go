package cli

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// messagesToMend names the cases whose message checkMessages still
// refuses (none today; a case listed here is skipped by that check).
var messagesToMend = map[string]bool{}

// TestBadInputsTableTrain pins, for train, eval, export, serve and
// coordinator, the exit code and the message of bad flags, config values
// and files: 2 for a usage mistake, 1 for bad
// data or a runtime failure, one prefix per message, the config key named
// for a bad value, and huge values refused with the value and the limit
// before anything is allocated.
func TestBadInputsTableTrain(t *testing.T) {
	dir, cfg := trainFixture(t)
	if code, _, e := run(t, "train", "--config", cfg, "--quiet", "--set", "num_epochs=1"); code != 0 {
		t.Fatal(e)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	test := filepath.Join(dir, "test.txt")
	short := write("short.txt", "usa\tembassy\n")
	oneField := write("one-field.txt", "usa\n")
	empty := write("empty-token", "  \n")
	emptyFile := write("empty.txt", "# no edge\n")
	alien := write("alien.txt", "atlantis\tembassy\tmu\n")
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	other := "checkpoint_path=" + filepath.Join(dir, "none")
	dupJSON := write("dup.json", "{\"entity_path\": \"ent\",\n \"entity_path\": \"ent2\"}\n")
	// A store that holds no edge (an empty file imported), with a
	// checkpoint_path that nothing may create.
	cfgText, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	emptyCfg := write("empty.toml", strings.NewReplacer(filepath.Join(dir, "ent"), filepath.Join(dir, "ent0"),
		filepath.Join(dir, "edges"), filepath.Join(dir, "edges0"), filepath.Join(dir, "ckpt"), filepath.Join(dir, "ckpt0")).Replace(string(cfgText)))
	if code, _, e := run(t, "import", "--quiet", "--config", emptyCfg, "--rel-col", "1", write("no-edges.txt", "")); code != 0 {
		t.Fatal(e)
	}
	set := func(kv ...string) []string {
		args := []string{"train", "--config", cfg, "--quiet"}
		for _, s := range kv {
			args = append(args, "--set", s)
		}
		return args
	}
	cases := []struct {
		name string
		args []string
		full bool // stdout fails as a full disk
		code int
		msg  string
	}{
		// train: usage
		{"train without config", []string{"train"}, false, 2, "--config is required"},
		{"train with an argument", []string{"train", "--config", cfg, "extra"}, false, 2, "unexpected argument \"extra\""},
		{"train bad flag", []string{"train", "--config", cfg, "--epochs", "3"}, false, 2, "batchprep train: unknown flag --epochs"},
		{"train bad duration", []string{"train", "--config", cfg, "--lease-ttl", "zz"}, false, 2, `--lease-ttl "zz": want a duration such as 30s or 5m`},
		// train: config values, each naming its key
		{"train missing config", []string{"train", "--config", filepath.Join(dir, "no.toml")}, false, 1, "no.toml: no such file or directory"},
		// a --set that is not key=value or names no key is a usage mistake
		{"train --set without =", set("dimension"), false, 2, "batchprep train: --set dimension: override must be key=value"},
		{"train unknown key", set("dimensions=8"), false, 2, "batchprep train: --set dimensions: unknown key"},
		{"train --set past a list", set("relations.3.operator=linear"), false, 2, "--set relations.3.operator: no element 3 (the list has 1 element)"},
		{"train --set inside a value", set("dimension.x=1"), false, 2, "--set dimension.x: cannot set inside dimension, which is not a table"},
		{"eval --set without =", []string{"eval", "--config", cfg, "--edges", test, "--set", "lr"}, false, 2, "--set lr: override must be key=value"},
		{"train dimension not a number", set("dimension=abc"), false, 1, "dimension: want an integer, got string \"abc\""},
		{"train dimension 0", set("dimension=0"), false, 1, "dimension: is required to train (>= 1)"},
		{"train bad operator", set("relations.0.operator=rotate"), false, 1, "relations[0].operator: \"rotate\" is not one of"},
		{"train bad comparator", set("comparator=euclid"), false, 1, "comparator: \"euclid\" is not one of dot, cos, l2, squared_l2"},
		{"train bad loss", set("loss_fn=hinge"), false, 1, "loss_fn: \"hinge\" is not one of ranking, logistic, softmax"},
		{"train negative lr", set("lr=-1"), false, 1, "lr: must be a finite number >= 0, got -1"},
		{"train batch not a multiple", set("batch_size=75"), false, 1, "batch_size: must be a multiple of num_batch_negs (50), got 75"},
		{"train no checkpoint_path", set("checkpoint_path="), false, 1, "checkpoint_path: is required to train"},
		{"train checkpoint_path a file", set("checkpoint_path=" + test), false, 1, test},
		{"train no store", set("entity_path=" + filepath.Join(dir, "nowhere")), false, 1, "no entity manifest: entity_path holds no imported graph (run batchprep import)"},
		{"train another config's checkpoint", set("dimension=16", "lr=0.5"), false, 1, "dimension: checkpoint has 8, config has 16"},
		{"train unsupported key", set("bias=true"), false, 1, "bias = true is not supported"},
		// nonsense values and configs batchprep cannot read
		{"train ranking margin 0", set("loss_fn=ranking", "margin=0"), false, 1, `margin: must be > 0 with loss_fn = "ranking"`},
		{"train no evaluation negatives", set("eval_num_batch_negs=0", "eval_num_uniform_negs=0"), false, 1,
			"eval_num_uniform_negs: 0, and eval_num_batch_negs 0, with eval_fraction = 0.1 would rank each held-out edge against no negative: set one of them >= 1"},
		{"train a JSON duplicate key", []string{"train", "--config", dupJSON}, false, 1, `entity_path: json: line 2, column 2: key "entity_path" is given twice in one object (first at line 1, column 2)`},
		// nothing to train is an error, and nothing is written
		{"train zero epochs", set("num_epochs=0", "checkpoint_path="+filepath.Join(dir, "ckpt0")), false, 1, "nothing to train: num_epochs is 0 (set it to 1 or more"},
		{"train an empty store", []string{"train", "--config", emptyCfg, "--quiet"}, false, 1, "nothing to train: the training edge sets hold no edge: edges0 (edge_paths[0], role train); import edges first"},
		// train: huge values, refused with the value and the limit
		{"train huge dimension", set("dimension=100000000000"), false, 1, "dimension: 100000000000 exceeds the limit 65536"},
		{"train huge uniform negatives", set("num_uniform_negs=100000000000"), false, 1, "num_uniform_negs: 100000000000 exceeds the limit 65536"},
		{"train huge batch negatives", set("num_batch_negs=1000000"), false, 1, "num_batch_negs: 1000000 exceeds the limit 65536"},
		{"train huge batch", set("batch_size=100000000000"), false, 1, "batch_size: 100000000000 exceeds the limit 16777216"},
		{"train huge partitions", set("entities.country.num_partitions=70000"), false, 1, "entities.country.num_partitions: 70000 exceeds the limit 65536"},
		{"train huge workers", set("workers=100000"), false, 1, "workers: 100000 exceeds the limit 4096"},
		// eval
		{"eval without edges", []string{"eval", "--config", cfg}, false, 2, "--config and one of --edges or --edge-set are required"},
		{"eval edges and edge set", []string{"eval", "--config", cfg, "--edges", test, "--edge-set", "test"}, false, 2, "--config and one of --edges or --edge-set are required"},
		{"eval unknown edge set", []string{"eval", "--config", cfg, "--edge-set", "test"}, false, 1, "--edge-set: no edge set is called \"test\"; the config's edge sets: edges (edge_paths[0], role train)"},
		{"eval no relation column", []string{"eval", "--config", cfg, "--edges", test, "--rel-col", "-1"}, false, 1, "no relation column (--rel-col -1), but the store has 55 relations: pass the relation's column (--rel-col 1 for head, relation, tail lines)"},
		{"eval empty file", []string{"eval", "--config", cfg, "--edges", emptyFile, "--rel-col", "1"}, false, 1, emptyFile + " holds no edge: nothing to rank"},
		{"eval nothing known", []string{"eval", "--config", cfg, "--edges", test, "--rel-col", "2", "--rhs-col", "1"}, false, 1, test + ": none of its 201 edges names only entities and relations of the imported files"},
		{"eval filter none known", []string{"eval", "--config", cfg, "--edges", test, "--rel-col", "1", "--filter", alien}, false, 1, "--filter " + alien + ": its one edge names an entity or relation that is in no imported file"},
		{"eval empty filter", []string{"eval", "--config", cfg, "--edges", test, "--rel-col", "1", "--filter", emptyFile}, false, 1, "--filter " + emptyFile + ": holds no edge line"},
		{"eval bad format", []string{"eval", "--config", cfg, "--edges", test, "--format", "xml"}, false, 2, "--format \"xml\": want text or json"},
		{"eval negative column", []string{"eval", "--config", cfg, "--edges", test, "--lhs-col", "-3"}, false, 2, "--lhs-col -3, --rel-col -1, --rhs-col 2: columns are 0-based"},
		{"eval bad delimiter", []string{"eval", "--config", cfg, "--edges", test, "--delimiter", "pipe"}, false, 2, "--delimiter \"pipe\": want tab, comma or space"},
		{"eval missing edges", []string{"eval", "--config", cfg, "--edges", filepath.Join(dir, "no.txt")}, false, 1, "open " + filepath.Join(dir, "no.txt") + ": no such file or directory"},
		{"eval short line", []string{"eval", "--config", cfg, "--edges", short, "--rel-col", "1"}, false, 1, short + ":1:12: 2 fields, need at least 3"},
		{"eval one-field line", []string{"eval", "--config", cfg, "--edges", oneField, "--rel-col", "1"}, false, 1, oneField + ":1:4: 1 field, need at least 3"},
		{"import one-field line", []string{"import", "--config", emptyCfg, "--rel-col", "1", oneField}, false, 1, "1 field, the chosen columns need at least 3"},
		{"eval missing filter", []string{"eval", "--config", cfg, "--edges", test, "--rel-col", "1", "--filter", filepath.Join(dir, "no.txt")}, false, 1, "no.txt: no such file or directory"},
		{"eval no checkpoint", []string{"eval", "--config", cfg, "--edges", test, "--rel-col", "1", "--set", other}, false, 1, "holds no checkpoint: no checkpoint.json (run batchprep train first)"},
		{"eval another config", []string{"eval", "--config", cfg, "--edges", test, "--rel-col", "1", "--set", "relations.0.operator=linear"}, false, 1, "relations[0].operator: checkpoint has"},
		{"eval huge dimension", []string{"eval", "--config", cfg, "--edges", test, "--rel-col", "1", "--set", "dimension=100000000000"}, false, 1, "dimension: 100000000000 exceeds the limit 65536"},
		{"eval to a full disk", []string{"eval", "--config", cfg, "--edges", test, "--rel-col", "1"}, true, 1, "batchprep eval: writing output:"},
		// export
		{"export without config", []string{"export"}, false, 2, "--config is required"},
		{"export bad format", []string{"export", "--config", cfg, "--format", "npy"}, false, 2, "--format \"npy\": want tsv, binary or pbg"},
		{"export binary to stdout", []string{"export", "--config", cfg, "--format", "binary"}, false, 2, "--format binary needs --out FILE"},
		{"export into a vanished directory", []string{"export", "--config", cfg, "--out", filepath.Join(dir, "gone", "e.tsv")}, false, 1, "writing " + filepath.Join(dir, "gone", "e.tsv") + ": open"},
		{"export to a FIFO", []string{"export", "--config", cfg, "--out", fifo}, false, 1, fifo + " is a named pipe (FIFO), not a regular file; refusing to replace it"},
		{"export no checkpoint", []string{"export", "--config", cfg, "--set", other}, false, 1, "holds no checkpoint: no checkpoint.json"},
		{"export to a full disk", []string{"export", "--config", cfg}, true, 1, "batchprep export: writing output:"},
		// serve
		{"serve with an argument", []string{"serve", "extra"}, false, 2, "unexpected argument \"extra\""},
		{"serve cert without key", []string{"serve", "--tls-cert", test}, false, 2, "--tls-cert and --tls-key go together"},
		{"serve open without token", []string{"serve", "--listen", "0.0.0.0:0"}, false, 2, "--listen 0.0.0.0:0 is not a loopback address: --token-file is required"},
		{"serve bad listen", []string{"serve", "--listen", "nope"}, false, 2, "--listen \"nope\": want host:port"},
		{"serve bad listen port", []string{"serve", "--listen", "127.0.0.1:99999"}, false, 2, "--listen \"127.0.0.1:99999\": the port \"99999\" is not a number from 0 to 65535"},
		{"serve bad metrics listen", []string{"serve", "--listen", "127.0.0.1:0", "--metrics-listen", "localhost"}, false, 2, "--metrics-listen \"localhost\": want host:port"},
		{"serve metrics open without token", []string{"serve", "--listen", "127.0.0.1:0", "--metrics-listen", "0.0.0.0:0"}, false, 2, "--metrics-listen 0.0.0.0:0 is not a loopback address"},
		{"serve missing token file", []string{"serve", "--token-file", filepath.Join(dir, "no-token")}, false, 1, "--token-file: open " + filepath.Join(dir, "no-token") + ": no such file or directory"},
		{"serve empty token file", []string{"serve", "--token-file", empty}, false, 2, "the file is empty"},
		{"serve bad certificate", []string{"serve", "--tls-cert", test, "--tls-key", test}, false, 1, "--tls-cert/--tls-key: tls: failed to find any PEM data"},
		{"serve busy port", []string{"serve", "--listen", busy.Addr().String(), "--metrics-listen", "off"}, false, 1, "address already in use"},
		// coordinator
		{"coordinator without data dir", []string{"coordinator"}, false, 2, "--data-dir is required"},
		{"coordinator with an argument", []string{"coordinator", "--data-dir", dir, "extra"}, false, 2, "unexpected argument \"extra\""},
		{"coordinator bad listen", []string{"coordinator", "--data-dir", filepath.Join(dir, "etcd"), "--listen", "nope"}, false, 2, "--listen \"nope\": want host:port"},
		{"coordinator data dir a file", []string{"coordinator", "--data-dir", test, "--listen", "127.0.0.1:0"}, false, 1, "cannot access data directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var o, e bytes.Buffer
			var stdout interface{ Write([]byte) (int, error) } = &o
			if c.full {
				stdout = fullWriter{}
			}
			code := Main(c.args, strings.NewReader(""), stdout, &e)
			if code != c.code || !strings.Contains(e.String(), c.msg) {
				t.Errorf("%v:\ncode %d (want %d)\nstderr %q\n(want %q)", c.args, code, c.code, e.String(), c.msg)
			}
			lines := strings.Split(strings.TrimSpace(e.String()), "\n")
			if !strings.HasPrefix(lines[0], "batchprep "+c.args[0]+": ") {
				t.Errorf("message without the command's prefix: %q", lines[0])
			}
			for _, line := range lines {
				if repeatedPrefix.MatchString(line) {
					t.Errorf("repeated prefix: %q", line)
				}
			}
			if !messagesToMend[c.name] {
				checkMessages(t, e.String())
				checkMessages(t, o.String())
			}
		})
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO given to --out was replaced")
	}
	if _, err := os.Stat(filepath.Join(dir, "ckpt0")); !os.IsNotExist(err) {
		t.Errorf("a run with nothing to train wrote its checkpoint_path: %v", err)
	}
}
