"""The graph half: read_graph() streams a plan's records (SPEC B4)."""

from __future__ import annotations

import json
from typing import Any, Dict, Iterator, Mapping, Optional, Union

import grpc
import numpy as np

from . import batchprep_pb2 as pb
from .errors import BatchprepError
from .request import INT32_MAX, INT64_MAX, check_int, state_bytes
from .server import Connection, settle

_I4, _I8, _F4 = np.dtype("<i4"), np.dtype("<i8"), np.dtype("<f4")


class GraphRecord:
    """A bucket record (kind "bucket": edges, holdout ordinals, resumed) or a
    batch record (kind "batch": worker, batch, relation (None in dynamic
    mode), ordinals, lhs, rhs, rel, weight (None without weights))."""

    def __init__(self, m: pb.GraphRecord) -> None:
        self.kind = "bucket" if m.kind == pb.GraphRecord.BUCKET else "batch"
        self.epoch, self.edge_set, self.chunk = m.epoch, m.edge_set, m.chunk
        self.bucket, self.index = (m.bucket_lhs, m.bucket_rhs), m.index
        if self.kind == "bucket":
            self.edges, self.resumed = m.edges, m.resumed
            self.holdout = np.frombuffer(m.holdout, dtype=_I8)
        else:
            self.worker, self.batch = m.worker, m.batch
            self.relation = None if m.relation < 0 else m.relation
            self.ordinals = np.frombuffer(m.ordinals, dtype=_I8)
            self.lhs = np.frombuffer(m.lhs, dtype=_I4)
            self.rhs = np.frombuffer(m.rhs, dtype=_I4)
            self.rel = np.frombuffer(m.rel, dtype=_I4)
            self.weight = np.frombuffer(m.weight, dtype=_F4) if m.weight else None
        self._state = m.state

    @property
    def state(self) -> Dict[str, Any]:
        """The plan state to resume right after this record (a dict)."""
        return json.loads(self._state)


def read_graph(config: str, worker: Optional[int] = None, state: Optional[Union[Mapping[str, Any], bytes]] = None,
               max_batches: Optional[int] = None, address: Optional[str] = None, token: Optional[str] = None,
               root_certificates: Optional[bytes] = None) -> Iterator[GraphRecord]:
    """The records of `batchprep plan --config CONFIG` (all workers' batches
    when worker is None, else that worker's), each with its arrays."""
    req = pb.GraphRequest(config=str(config))
    if worker is None:
        req.all_workers = True
    else:
        req.worker = check_int("worker", worker, 0, INT32_MAX)
    if max_batches is not None:
        req.max_batches = check_int("max_batches", max_batches, 1, INT64_MAX)
    if state is not None:
        req.state = state_bytes(state)
    conn = Connection(address, token=token, root_certificates=root_certificates)
    call = None
    try:
        call = conn.graph(req, metadata=conn.metadata)
        for m in call:
            yield GraphRecord(m)
    except grpc.RpcError as e:
        raise BatchprepError(e.code(), e.details()) from None
    finally:
        if call is not None:  # left early: end the call, and give back its socket (see settle)
            call.cancel()
            settle(call)
        conn.close()
