// Command batchprep prepares training data in minibatches: CNTK Text Format
// corpora on a randomized nominal timeline, and PyTorch-BigGraph edge
// buckets. Run "batchprep help" for the subcommands.
package main

import (
	"os"

	"github.com/batchprep/batchprep/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
