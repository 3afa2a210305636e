"""A MetaImage (.mha) reader for the RTK tests: uncompressed, LOCAL data,
float, identity direction; enough for what RTK's command-line tools write,
without SimpleITK (not a Debian package)."""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np


def read_mha(path: str) -> Tuple[np.ndarray, Dict[str, str]]:
    """The array in numpy order (last ITK axis first) and the header."""
    with open(path, "rb") as f:
        data = f.read()
    header: Dict[str, str] = {}
    pos = 0
    while True:
        end = data.index(b"\n", pos)
        key, _, value = data[pos:end].decode("ascii").partition("=")
        pos = end + 1
        header[key.strip()] = value.strip()
        if key.strip() == "ElementDataFile":
            break
    if header.get("CompressedData", "False") != "False" or header["ElementDataFile"] != "LOCAL":
        raise ValueError(f"{path}: only uncompressed MetaImage with LOCAL data is read")
    direction = [float(x) for x in header.get("TransformMatrix", "1 0 0 0 1 0 0 0 1").split()]
    if not np.allclose(direction, np.eye(3).ravel()):
        raise ValueError(f"{path}: a direction other than the identity")
    size = [int(x) for x in header["DimSize"].split()]
    dtype = {"MET_FLOAT": np.float32, "MET_DOUBLE": np.float64}[header["ElementType"]]
    count = int(np.prod(size))
    array = np.frombuffer(data, dtype=dtype, count=count, offset=pos)
    return array.reshape(size[::-1]), header


def spacing_origin(header: Dict[str, str]) -> Tuple[Tuple[float, ...], Tuple[float, ...]]:
    """ElementSpacing and Offset (ITK's origin) in numpy axis order."""
    spacing = tuple(float(x) for x in header["ElementSpacing"].split())[::-1]
    origin = tuple(float(x) for x in header["Offset"].split())[::-1]
    return spacing, origin
