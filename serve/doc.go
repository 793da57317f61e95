// Package serve is the gRPC service behind `batchprep serve`: it streams
// the minibatches of a corpus or of a weighted mixture of corpora (SPEC A)
// and a graph plan's records (SPEC B) to trainers in other languages, as
// the Batches service of proto/batchprep.proto (docs/serve.md). Arrays travel as raw little-endian bytes, so a Python
// client wraps them with numpy.frombuffer without parsing.
//
// Invariants (tests cite them by number):
//
//  1. Contract. For the same choices, the Sequences stream holds exactly the
//     minibatches `batchprep read --format jsonl` prints (step, epoch, sweep,
//     start, end, flags, sequences, ids, per-stream sample counts), with the
//     data of every stream: dense float32 rows, sparse CSR (int32 row offsets
//     and column indices, float32 values), int32 per-sequence lengths. The
//     request's choices are converted by readopts, as read's flags are.
//     A request with weights is `batchprep read --mix` (corpus/mixture):
//     each minibatch also says each sequence's corpus, as read's "corpus"
//     and "skipped_corpus", in every layout (plain, packed, columns and
//     shared memory); a request without weights is encoded as before.
//  2. Resume. Every message carries the state after it; a request with that
//     state streams exactly what followed it in the uninterrupted stream.
//  3. Isolation. Each call has its own source or plan iterator; concurrent
//     calls do not change each other's output. Parsed indexes of a file are
//     shared between calls with the same reader settings, and calls asking
//     for a file being indexed wait for that one pass (the file must not
//     change meanwhile; another file, or a changed size or modification
//     time, opens it anew).
//  4. Release. When a client goes away or cancels, its call returns within
//     one minibatch, closes its source and drops its share of the cache; the
//     clients gauge counts only calls in progress. A call that leaves while
//     its file is being indexed returns at once, and the index pass stops
//     within a block (1 MiB per goroutine) once no call waits for it, or
//     when the server stops.
//  5. Errors. A request that cannot work is refused with InvalidArgument (bad
//     choice), NotFound (missing file) or FailedPrecondition (state of another
//     setup), before any message, with a message naming the request field.
//  6. Access. A server with a token refuses every Batches call without
//     "authorization: Bearer TOKEN" metadata (Unauthenticated); the health
//     service stays open.
//  7. Graph. The Graph stream holds the records of `batchprep plan` for the
//     same config: every bucket record, and the batch records of the chosen
//     worker (or all), each with its edges' ordinals, lhs, rhs, relations and
//     weights, and the plan state after it.
//  8. Groups. SequenceGroups streams exactly the minibatches of Sequences
//     for the same request, in order, several per message: message n
//     (counting from zero) holds at most 2^n of them, and a message other
//     than the last holds fewer only when its minibatches reach group_bytes
//     encoded bytes.
//  9. Elision. With elide_unit_sparse, a sparse stream's row offsets are
//     left out (unit_rows) exactly when every sample has one entry, and its
//     values (unit_values) exactly when all are 1.0; rebuilding them gives
//     the message sent without it.
//  10. Data root. A request reads only regular files under the data
//     directories (Options.DataDirs; relative paths in the first): a path,
//     '..' or link leading out, and a file the server may not read, are
//     refused with one code and one text whether or not the file exists;
//     FIFOs, devices, sockets and directories are refused before they are
//     opened. The corpus file indexed and read is the one opened and
//     checked, never the path opened again. Each file of a mixture is
//     checked so, and a refusal names it files[i]. A graph config's store directories (and their entries) must
//     lie under them too. Errors sent to a client name the field, the file
//     as the client wrote it and the line and column, never text of a file;
//     Options.Logf gets the whole error.
//  11. Limits. A request asking more samples per minibatch than
//     MaxMinibatchSamples, or whose dense rows alone would pass
//     MaxMinibatchBytes, is refused before anything is read; a minibatch
//     that encodes past MaxMinibatchBytes ends the call with
//     ResourceExhausted. The byte limit bounds graph records too: a config
//     whose batch_size alone makes batch records past it (20 bytes an
//     edge) is refused before anything is read, and a record whose arrays
//     would pass it ends the call with ResourceExhausted before they are
//     allocated. A call whose randomization window (the chunks its source
//     may hold at once, times the chunk size) passes MaxWindowBytes is
//     refused before a minibatch is made; a mixture's corpora each have a
//     window, and their sum counts. Each message states the limit.
//  12. Calls. At most MaxConcurrentCalls Batches calls run at once; as many
//     more wait for a slot (holding no file and no memory of their own
//     meanwhile) and run as slots free up; a call past those is refused
//     with ResourceExhausted stating the limit. The health service is not
//     counted.
//  13. No client holds the server. One client runs at most
//     MaxCallsPerPeer calls at once (a client is its IP address, or its
//     connection over loopback; Unix-socket clients are not bounded); its
//     further calls wait while other clients' calls take the free slots.
//     A call whose client has taken no message for StallTimeout (with
//     shared_memory: has released none of the ring) ends with
//     DeadlineExceeded naming the timeout, freeing its slot; the client
//     still reads what was sent before the status.
//  14. Idle memory. When a call ends, a cached reader no call uses keeps
//     its index only (its read buffers and parsed chunks go); a second
//     after the last call ends, the server collects and returns the free
//     pages to the system, so an idle server's live heap is a fresh
//     server's plus the cached indexes.
//  15. Objects. A request may name s3://BUCKET/KEY as a corpus (alone or
//     in a mixture) when Options.AllowBuckets holds BUCKET or "*". An
//     object in another bucket, and one the server's credentials may not
//     read, get one code and one text, as a path outside the data root
//     does; a missing one is NotFound naming the field and the URL. No
//     error sent to a client holds the store's text (where credentials
//     come from) or a path of the server's. A reader is shared by calls
//     naming the same URL, ETag and size with the same settings; a
//     replaced object is indexed anew. Limits (invariant 11) apply alike.
//
// The package never prints (Options.Logf receives what its operator may
// read); metrics are registered on the registry given in Options.
package serve
