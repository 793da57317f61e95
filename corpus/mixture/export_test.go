package mixture

import "github.com/batchprep/batchprep/internal/mix"

func derivedSeed(seed uint64, k int) uint64 { return mix.Seed(seed, uint64(k)) }
