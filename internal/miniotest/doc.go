// Package miniotest runs a real MinIO server for tests: an S3-compatible
// store on a loopback port with a temporary data directory, built from a
// pinned version of github.com/minio/minio. MinIO is AGPL-licensed: it runs
// here as a separate process that tests talk to over HTTP, and nothing of
// it is linked into batchprep.
//
// Binary finds or builds the server (once per machine, under the user's
// cache directory); Start launches it; Proxy puts a fault-injecting HTTP
// proxy in front of it (delays, connection resets, 500, 503 SlowDown, 429,
// bodies cut short or stalled) that also counts requests and the GETs in flight.
// Server.CPU and ProcessCPU read a process's CPU time (Linux), so that a
// benchmark can report what the store cost the machine beside the reader.
//
// Invariants (tests cite them by number):
//
//  1. Binary returns an executable of version Version. It is built at most
//     once per machine: concurrent test binaries wait on a file lock, the
//     build goes to a temporary directory and is renamed into place, so a
//     half-built server is never found.
//  2. When the server cannot be had, the test skips with the reason, or
//     fails when the environment requires real components (CI=true or
//     BATCHPREP_REQUIRE_SHARED=1, see internal/shared.Required).
//  3. Start returns a server that answers S3 requests, with random root
//     credentials and its own empty data directory; it is stopped when the
//     test ends. Restart keeps the port, the credentials and the data.
//  4. Server.Env names only loopback endpoints and test credentials, and
//     points the AWS shared config and credentials files at absent files,
//     so the host's ~/.aws never leaks into a test; instance metadata
//     (an address off the machine) is disabled.
//  5. A Proxy forwards requests unchanged (Host header included, so
//     signatures stay valid) except where a fault is scheduled; request
//     numbers count every request from 1, in arrival order.
package miniotest
