//go:build race

package cli

// raceEnabled: under the race detector every child process runs several
// times slower, so the fault tests try fewer cases (the long runs of
// docs/reliability.md are made without it).
const raceEnabled = true
