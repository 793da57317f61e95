//go:build !race

package model

const raceSafe = false
