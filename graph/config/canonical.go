package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Canonical returns a canonical JSON encoding of c: every key, in a fixed
// order, entity types sorted, workers as written (null when unset). Two
// configs are equal iff their encodings are equal (invariant 5).
func (c *Config) Canonical() []byte {
	b, err := json.Marshal(c)
	if err != nil {
		panic("config: canonical encoding: " + err.Error()) // only plain types: cannot happen
	}
	return b
}

// Fingerprint is the hex SHA-256 of Canonical.
func (c *Config) Fingerprint() string {
	s := sha256.Sum256(c.Canonical())
	return hex.EncodeToString(s[:])
}

// storageKey is the part of a config that decides what import writes.
type storageKey struct {
	Entities         map[string]storageEntity `json:"entities"`
	Relations        []storageRelation        `json:"relations"`
	DynamicRelations bool                     `json:"dynamic_relations"`
	Seed             uint64                   `json:"seed"`
}

type storageEntity struct {
	NumPartitions int  `json:"num_partitions"`
	Featurized    bool `json:"featurized"`
}

type storageRelation struct {
	Name string `json:"name"`
	Lhs  string `json:"lhs"`
	Rhs  string `json:"rhs"`
}

// StorageFingerprint is the hex SHA-256 of the keys that decide the stored
// edges and entity partitions: entity types and their partition counts,
// relation names and sides, dynamic_relations and seed. An edge store
// records it, and opening the store with a config whose StorageFingerprint
// differs is an error (the data would be misread).
func (c *Config) StorageFingerprint() string {
	k := storageKey{Entities: map[string]storageEntity{}, DynamicRelations: c.DynamicRelations, Seed: c.Seed}
	for n, e := range c.Entities {
		k.Entities[n] = storageEntity{e.NumPartitions, e.Featurized}
	}
	for _, r := range c.Relations {
		k.Relations = append(k.Relations, storageRelation{r.Name, r.Lhs, r.Rhs})
	}
	b, _ := json.Marshal(k)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
