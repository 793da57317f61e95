package config

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// kind is the type a key's value must have.
type kind int

const (
	kString kind = iota
	kInt
	kUint
	kFloat
	kBool
	kStringList
	kEntities  // table of entity tables
	kRelations // list of relation tables
)

func (k kind) String() string {
	return [...]string{"a string", "an integer", "a non-negative integer", "a number", "a boolean",
		"a list of strings", "a table of entity types", "a list of relation tables"}[k]
}

// field describes one known key.
type field struct {
	kind     kind
	nullable bool // null / absent means "unset" (a pointer field)
	required bool
}

// topKeys are every key of PBG's ConfigSchema plus batchprep's seed
// (invariant 1: a PBG config dict dumped to JSON loads).
var topKeys = map[string]field{
	"entities":                         {kind: kEntities, required: true},
	"relations":                        {kind: kRelations, required: true},
	"entity_path":                      {kind: kString, required: true},
	"edge_paths":                       {kind: kStringList, required: true},
	"edge_roles":                       {kind: kStringList, nullable: true},
	"checkpoint_path":                  {kind: kString},
	"init_path":                        {kind: kString, nullable: true},
	"checkpoint_preservation_interval": {kind: kInt, nullable: true},
	"num_epochs":                       {kind: kInt},
	"num_edge_chunks":                  {kind: kInt, nullable: true},
	"max_edges_per_chunk":              {kind: kInt},
	"bucket_order":                     {kind: kString},
	"workers":                          {kind: kInt, nullable: true},
	"batch_size":                       {kind: kInt},
	"eval_fraction":                    {kind: kFloat},
	"dynamic_relations":                {kind: kBool},
	"seed":                             {kind: kUint},
	"memory_limit":                     {kind: kString},
	"checkpoint_buckets":               {kind: kInt},
	"partition_buffer":                 {kind: kInt},
	"negatives":                        {kind: kString},
	"degree_exponent":                  {kind: kFloat},
	"interleave_buckets":               {kind: kBool},

	"dimension":             {kind: kInt},
	"init_scale":            {kind: kFloat},
	"global_emb":            {kind: kBool},
	"comparator":            {kind: kString},
	"bias":                  {kind: kBool},
	"loss_fn":               {kind: kString},
	"margin":                {kind: kFloat},
	"regularization_coef":   {kind: kFloat},
	"regularizer":           {kind: kString},
	"max_norm":              {kind: kFloat, nullable: true},
	"lr":                    {kind: kFloat},
	"relation_lr":           {kind: kFloat, nullable: true},
	"num_batch_negs":        {kind: kInt},
	"num_uniform_negs":      {kind: kInt},
	"disable_lhs_negs":      {kind: kBool},
	"disable_rhs_negs":      {kind: kBool},
	"eval_num_batch_negs":   {kind: kInt, nullable: true},
	"eval_num_uniform_negs": {kind: kInt, nullable: true},
	"early_stopping":        {kind: kBool},
	"hogwild_delay":         {kind: kFloat},
	"half_precision":        {kind: kBool},

	"num_machines":                            {kind: kInt},
	"num_partition_servers":                   {kind: kInt},
	"distributed_init_method":                 {kind: kString, nullable: true},
	"distributed_tree_init_order":             {kind: kBool},
	"num_groups_for_partition_server":         {kind: kInt},
	"num_groups_per_sharded_partition_server": {kind: kInt},
	"partition_shard_size":                    {kind: kInt},
	"num_gpus":                                {kind: kInt},
	"background_io":                           {kind: kBool},
	"verbose":                                 {kind: kInt},
}

var entityKeys = map[string]field{
	"num_partitions": {kind: kInt, required: true},
	"featurized":     {kind: kBool},
	"dimension":      {kind: kInt, nullable: true},
}

var relationKeys = map[string]field{
	"name":     {kind: kString, required: true},
	"lhs":      {kind: kString, required: true},
	"rhs":      {kind: kString, required: true},
	"weight":   {kind: kFloat},
	"operator": {kind: kString},
	"all_negs": {kind: kBool},
}

// KnownKeys returns the top-level keys Load accepts, sorted.
func KnownKeys() []string { return sortedKeys(topKeys) }

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// checkTable checks a decoded table against a schema: unknown keys, missing
// required keys, nulls and value types. It normalizes numbers in place
// (json.Number and integral floats become int64/uint64/float64) so that the
// table can be re-encoded and decoded into the Config struct without error.
func checkTable(prefix string, m map[string]any, schema map[string]field) error {
	for _, k := range sortedKeys(m) {
		f, ok := schema[k]
		if !ok {
			return &Error{Key: join(prefix, k), Msg: fmt.Sprintf("unknown key (known: %s)", strings.Join(sortedKeys(schema), ", "))}
		}
		v := m[k]
		if v == nil {
			if !f.nullable {
				return &Error{Key: join(prefix, k), Msg: fmt.Sprintf("must not be null (want %s)", f.kind)}
			}
			continue
		}
		nv, err := checkValue(join(prefix, k), v, f.kind)
		if err != nil {
			return err
		}
		m[k] = nv
	}
	for _, k := range sortedKeys(schema) {
		if _, ok := m[k]; !ok && schema[k].required {
			return &Error{Key: join(prefix, k), Msg: "required key is missing"}
		}
	}
	return nil
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("string %q", x)
	case json.Number:
		return "number " + x.String()
	case int64:
		return fmt.Sprintf("integer %d", x)
	case float64:
		return fmt.Sprintf("number %v", x)
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case []any, []map[string]any:
		return "a list"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}

func checkValue(key string, v any, k kind) (any, error) {
	bad := func() error { return &Error{Key: key, Msg: fmt.Sprintf("want %s, got %s", k, describe(v))} }
	switch k {
	case kString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case kBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case kFloat:
		switch x := v.(type) {
		case json.Number:
			f, err := strconv.ParseFloat(x.String(), 64)
			if err == nil {
				return f, nil
			}
		case int64:
			return float64(x), nil
		case float64:
			return x, nil
		}
	case kInt:
		switch x := v.(type) {
		case json.Number:
			if i, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
				return i, nil
			}
			if f, err := strconv.ParseFloat(x.String(), 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<63 {
				return int64(f), nil
			}
		case int64:
			return x, nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
				return int64(x), nil
			}
		}
	case kUint:
		switch x := v.(type) {
		case json.Number:
			if i, err := strconv.ParseUint(x.String(), 10, 64); err == nil {
				return i, nil
			}
		case int64:
			if x >= 0 {
				return uint64(x), nil
			}
		case float64:
			if x == math.Trunc(x) && x >= 0 && x < 1<<64 {
				return uint64(x), nil
			}
		}
	case kStringList:
		l, ok := v.([]any)
		if !ok {
			return nil, bad()
		}
		for i, e := range l {
			if _, ok := e.(string); !ok {
				return nil, &Error{Key: fmt.Sprintf("%s[%d]", key, i), Msg: fmt.Sprintf("want a string, got %s", describe(e))}
			}
		}
		return l, nil
	case kEntities:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad()
		}
		for _, name := range sortedKeys(m) {
			t, ok := m[name].(map[string]any)
			if !ok {
				return nil, &Error{Key: key + "." + name, Msg: fmt.Sprintf("want a table, got %s", describe(m[name]))}
			}
			if err := checkTable(key+"."+name, t, entityKeys); err != nil {
				return nil, err
			}
		}
		return m, nil
	case kRelations:
		var l []any
		switch x := v.(type) {
		case []any:
			l = x
		case []map[string]any:
			for _, t := range x {
				l = append(l, t)
			}
		default:
			return nil, bad()
		}
		for i, e := range l {
			rk := fmt.Sprintf("%s[%d]", key, i)
			t, ok := e.(map[string]any)
			if !ok {
				return nil, &Error{Key: rk, Msg: fmt.Sprintf("want a table, got %s", describe(e))}
			}
			if err := checkTable(rk, t, relationKeys); err != nil {
				return nil, err
			}
			for dk, dv := range relationDefaults {
				if _, ok := t[dk]; !ok {
					t[dk] = dv
				}
			}
		}
		return l, nil
	}
	return nil, bad()
}
