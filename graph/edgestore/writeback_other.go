//go:build !linux

package edgestore

import "os"

// startWriteback does nothing where sync_file_range does not exist:
// Commit's fsync writes the pages.
func startWriteback(*os.File) {}
