//go:build !linux

package model

import "unsafe"

// advisePages does nothing outside Linux.
func advisePages(p unsafe.Pointer, n uintptr, huge bool) {}
