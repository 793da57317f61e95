//go:build race

package importer

// raceEnabled shortens the real-data tests under the race detector, which
// slows parsing about tenfold and adds nothing to a single-goroutine parser.
const raceEnabled = true
