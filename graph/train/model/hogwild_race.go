//go:build race

package model

const raceSafe = true
