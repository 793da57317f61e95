#!/usr/bin/python3
"""Writes the HDF5 files the Go tests read, with Debian's python3-h5py.

Run from this directory: /usr/bin/python3 gen.py. The files are small and
committed; the Go tests check the values written here.
"""
import h5py
import numpy as np


def default():
    # h5py's defaults: superblock 0, version 1 object headers, symbol tables.
    with h5py.File("default.h5", "w") as hf:
        hf.attrs["format_version"] = 1
        hf.attrs["config/json"] = '{"dimension": 4}'  # a variable-length string
        hf.attrs["fixed"] = np.bytes_("fixed string")
        hf.attrs["ratio"] = 0.25
        hf.attrs["small"] = np.int32(-7)
        hf.create_dataset("embeddings", data=np.arange(12, dtype=np.float32).reshape(3, 4) / 4)
        hf.create_dataset("optimizer/state_dict", data=np.frombuffer(b"opaque bytes", dtype="V1"))
        hf["lhs"] = np.array([5, -1, 1 << 40], dtype=np.int64)
        hf["u8"] = np.array([0, 255, 7], dtype=np.uint8)
        hf["i32"] = np.array([-2, 3], dtype=np.int32)
        hf["empty"] = np.zeros((0, 4), dtype=np.float32)
        hf["scalar"] = np.float64(1.5)


def tracked():
    # PBG's model file: a group that tracks creation order, nested groups.
    with h5py.File("tracked.h5", "w") as hf:
        hf.attrs["format_version"] = 1
        g = hf.create_group("model", track_order=True)
        for i, (name, shape) in enumerate([("relations/1/operator/rhs/translation", (4,)),
                                           ("relations/0/operator/rhs/linear_transformation", (4, 4)),
                                           ("entities/user/global_embedding", (4,))]):
            d = g.create_dataset(name, data=np.full(shape, i + 1, dtype=np.float32))
            d.attrs["state_dict_key"] = name.replace("/", ".")


def chunked():
    # PBG's edge files: resizable chunked int64 datasets.
    with h5py.File("chunked.h5", "w") as hf:
        hf.attrs["format_version"] = 1
        d = hf.create_dataset("rel", shape=(0,), maxshape=(None,), chunks=(4,), dtype=np.int64)
        d.resize((10,))
        d[:] = np.arange(10) * 3
        m = hf.create_dataset("m", shape=(5, 3), chunks=(2, 2), dtype=np.float32)
        m[...] = np.arange(15, dtype=np.float32).reshape(5, 3)
        hf.create_dataset("z", data=np.arange(6, dtype=np.int64), compression="gzip")


def latest():
    # libver="latest": superblock 3, version 2 object headers, checksums.
    with h5py.File("latest.h5", "w", libver="latest") as hf:
        hf.attrs["format_version"] = 1
        hf.create_dataset("embeddings", data=np.arange(6, dtype=np.float32).reshape(2, 3))
        hf.create_dataset("g/rhs", data=np.array([1, 2, 3], dtype=np.int64))


def many():
    # More links than one symbol node holds, and attributes past the first
    # header block (continuation messages).
    with h5py.File("many.h5", "w") as hf:
        for i in range(40):
            hf[f"d{i:02d}"] = np.array([i], dtype=np.int64)
        for i in range(30):
            hf.attrs[f"a{i:02d}"] = i


def dense():
    # Dense storage (fractal heap + version 2 B-tree): a creation-order
    # group with 1500 links (PBG's model/relations with many relations;
    # a B-tree of depth 2), 20 attributes on a creation-order group, and an
    # attribute past 64 KiB.
    with h5py.File("dense.h5", "w") as hf:
        g = hf.create_group("model", track_order=True)
        target = hf.create_group("target")
        target["x"] = np.array([7], dtype=np.int64)
        rel = g.create_group("relations", track_order=True)
        for i in range(1500):
            rel["%d" % i] = target  # hard links to one group: small file
        a = hf.create_group("attrs", track_order=True)
        for i in range(20):
            a.attrs["a%02d" % i] = i
        hf.attrs["big"] = "x" * 70000


import sys

for name in sys.argv[1:] or ["default", "dense", "tracked", "chunked", "latest", "many"]:
    globals()[name]()
