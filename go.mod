module github.com/batchprep/batchprep

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	golang.org/x/term v0.47.0
)

require golang.org/x/sys v0.49.0 // indirect
