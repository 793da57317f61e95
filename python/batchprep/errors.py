"""The errors and warnings the package raises; imported by every other
module, it imports none of them."""

from __future__ import annotations

from typing import Any


class BatchprepError(RuntimeError):
    """A call the server refused or could not finish.

    code is the grpc.StatusCode (None when the client found the problem
    itself) and details the server's message, which starts with the name of
    the request field at fault (e.g. ``randomize "x": want none, cntk or
    window``)."""

    def __init__(self, code: Any, details: str) -> None:
        super().__init__("%s: %s" % (code.name if code is not None else "error", details))
        self.code, self.details = code, details


class BatchprepWarning(UserWarning):
    """A diagnostic of the reader that did not stop the stream: an unknown
    stream in the file, a skipped sequence (within max_errors), or a request
    that has nothing to read. Filter it with the warnings module."""
