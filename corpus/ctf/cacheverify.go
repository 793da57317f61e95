package ctf

import (
	"fmt"
	"os"

	"github.com/batchprep/batchprep/corpus"
)

// CachePath returns where the index cache of the CTF file at path is kept
// for cfg.
func CachePath(path string, cfg Config) string { return cachePath(path, &cfg) }

// VerifyCache checks the index cache of the CTF file at path for cfg
// without using or rewriting it: nil when the cache decodes (magic,
// version, CRC, consistent counts) and matches the file and the
// configuration; an error for which os.IsNotExist is true when there is no
// cache; otherwise an error naming the cache file and what is wrong. (A
// reader never uses such a cache: it reports it and indexes the file.)
func VerifyCache(path string, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("ctf: %w", err)
	}
	defer f.Close()
	return VerifyCacheOf(f, path, cfg)
}

// VerifyCacheOf is VerifyCache for the corpus f (a local file or an
// object) named path.
func VerifyCacheOf(f corpus.Blob, path string, cfg Config) error {
	x, err := loadCache(f, path, &cfg)
	if err != nil {
		if os.IsNotExist(err) {
			return err
		}
		return fmt.Errorf("ctf: %s: %w", cachePath(path, &cfg), err)
	}
	x.m.Close()
	return nil
}
