package train

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/batchprep/batchprep/graph/config"
)

// ignoredKeys are config keys that do not change what a checkpoint holds:
// paths (the data are identified by the store's fingerprint), num_epochs
// (a finished run continues when it grows), and logging or I/O knobs.
var ignoredKeys = []string{"entity_path", "edge_paths", "checkpoint_path", "init_path", "num_epochs",
	"checkpoint_preservation_interval", "verbose", "background_io", "hogwild_delay",
	"eval_num_batch_negs", "eval_num_uniform_negs", "memory_limit", "checkpoint_buckets"}

// Fingerprint is what a checkpoint records of the config: every key that
// decides the training (canonical JSON), the resolved worker count and the
// edge store's fingerprint.
func Fingerprint(cfg *config.Config, store string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(cfg.Canonical(), &m); err != nil {
		panic(err) // canonical JSON always decodes
	}
	for _, k := range ignoredKeys {
		delete(m, k)
	}
	// partition_buffer decides what is trained only through the buffer
	// order and buffer negatives; negatives = "bucket" is the default.
	if cfg.BucketOrder != "buffer" && !cfg.BufferNegatives() {
		delete(m, "partition_buffer")
	} else {
		m["partition_buffer"] = float64(cfg.Buffer())
	}
	if !cfg.BufferNegatives() {
		delete(m, "negatives")
	}
	// degree_exponent decides what is trained with degree negatives only,
	// where its unset value is its default.
	if cfg.DegreeNegatives() {
		m["degree_exponent"] = cfg.DegreePower()
	} else {
		delete(m, "degree_exponent")
	}
	m["workers"] = float64(cfg.NumWorkers())
	m["edge_store"] = store
	return m
}

// DiffFingerprints names every key whose value differs, with both values
// (nested keys as relations[0].operator), in sorted order.
func DiffFingerprints(saved, now map[string]any) []string {
	var out []string
	diffValue("", normalize(saved), normalize(now), &out)
	sort.Strings(out)
	return out
}

// normalize makes numbers and maps comparable after a JSON round trip.
func normalize(v map[string]any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

func diffValue(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			diffValue(join(path, k), am[k], bm[k], out)
		}
		return
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			diffValue(fmt.Sprintf("%s[%d]", path, i), as[i], bs[i], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, fmt.Sprintf("%s: checkpoint has %s, config has %s", path, show(a), show(b)))
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func show(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return strings.TrimSpace(s)
}
