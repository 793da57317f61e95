//go:build !linux

package importer

// adviseHuge does nothing outside Linux.
func adviseHuge[T any](s []T) {}
