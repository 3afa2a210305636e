#!/usr/bin/env python3
"""Lists the GPU code inside a library's CUDA fat binary, without the CUDA
tools (this machine has no cuobjdump). A fat binary is a header (magic
0xBA55ED50, version 1, header size 16, payload size) and entries (kind 1
PTX, 2 ELF/SASS; header size; payload size; the architecture at offset 28).
The CUDA runtime's registration puts them in the .nv_fatbin section; a
fatbin the library hands to the driver itself (cuModuleLoadData) is plain
read-only data, so without .nv_fatbin the whole file is searched for
headers that parse; so it is for a file that is not ELF (a Windows DLL,
whose fatbin sits in .rdata, or a bare .fatbin).

    cuda_archs.py LIB                      prints "sass 75 80 ..." and "ptx 120"
    cuda_archs.py LIB --expect-sass 75,80 --expect-ptx 120
                                           exit 1 unless exactly those are there
"""
import argparse
import struct
import sys

FATBIN_MAGIC = 0xBA55ED50


def section(path, name):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        return b""  # PE or a bare fatbin: the caller searches the whole file
    if data[4] != 2:
        sys.exit(f"{path}: not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def header(i):
        return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
    strtab = header(shstrndx)
    for i in range(shnum):
        h = header(i)
        start = strtab[4] + h[0]
        sname = data[start:data.index(b"\0", start)].decode()
        if sname == name:
            return data[h[4]:h[4] + h[5]]
    return b""


def fatbin_entries(blob, pos):
    """The (kind, arch) entries of the fat binary at pos and its end, or
    None when what is there does not parse as one."""
    if pos + 16 > len(blob):
        return None
    magic, version, header_size, fat_size = struct.unpack_from("<IHHQ", blob, pos)
    if magic != FATBIN_MAGIC or version != 1 or header_size != 16:
        return None
    entry = pos + header_size
    end = entry + fat_size
    if end > len(blob):
        return None
    found = []
    while entry + 32 <= end:
        kind, _, entry_header, payload = struct.unpack_from("<HHIQ", blob, entry)
        if entry_header < 32 or entry + entry_header + payload > end:
            return None
        arch, = struct.unpack_from("<I", blob, entry + 28)
        found.append(("ptx" if kind == 1 else "sass" if kind == 2 else f"kind{kind}", arch))
        entry += entry_header + payload
    return (found, end) if found else None


def fatbins(blob):
    """Each fat binary in blob as (bytes, [(kind, arch), ...])."""
    magic = struct.pack("<I", FATBIN_MAGIC)
    pos = blob.find(magic)
    while pos >= 0:
        parsed = fatbin_entries(blob, pos)
        if parsed:
            yield parsed[1] - pos, parsed[0]
            pos = blob.find(magic, parsed[1])
        else:
            pos = blob.find(magic, pos + 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--expect-sass")
    ap.add_argument("--expect-ptx")
    a = ap.parse_args()
    blob = section(a.lib, ".nv_fatbin")
    where = ".nv_fatbin"
    if not blob:
        with open(a.lib, "rb") as f:
            blob = f.read()
        where = "the file (no .nv_fatbin)"
    found = {"sass": set(), "ptx": set()}
    count = size = 0
    for nbytes, fat_entries in fatbins(blob):
        count += 1
        size += nbytes
        for kind, arch in fat_entries:
            found.setdefault(kind, set()).add(arch)
    for kind in ("sass", "ptx"):
        print(kind, " ".join(str(x) for x in sorted(found[kind])) or "none")
    print(f"fatbin {size} bytes in {count} fat binar{'y' if count == 1 else 'ies'}, found in {where}")
    ok = True
    for kind, expected in (("sass", a.expect_sass), ("ptx", a.expect_ptx)):
        if expected is not None:
            want = {int(x) for x in expected.split(",") if x}
            if found[kind] != want:
                print(f"cuda_archs: {a.lib}: {kind} {sorted(found[kind])}, expected {sorted(want)}", file=sys.stderr)
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
