#!/usr/bin/env python3
"""fatbin_archs.py - list the GPU architectures whose code a CUDA fatbin
holds, without cuobjdump (which a toolkit may lack).

usage: fatbin_archs.py FILE.fatbin

Prints one line per entry, "sm_80" for a cubin (ELF) entry, "compute_80"
for PTX, with an "a" for an arch-specific build (sm_90a).  Exit 1 if the
file is not a fatbin as nvcc writes it.

The container, as nvcc 12 and 13 write it (little-endian): a 16-byte
header (u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of
the entries), then entries, each a header (u16 kind: 1 PTX, 2 ELF; u16;
u32 header size; u64 payload size; ...; u32 SM number at byte 28; u32
flags at byte 40, 0x100000 marking an arch-specific "a" target) followed
by its payload.  An ELF payload is checked to start with the ELF magic,
so a misread layout fails instead of listing nonsense.
"""
import struct
import sys

MAGIC = 0xBA55ED50
ARCH_SPECIFIC = 0x100000


def entries(data):
    magic, _version, hsize, size = struct.unpack_from("<IHHQ", data, 0)
    if magic != MAGIC:
        raise ValueError("not a fatbin (magic %#x)" % magic)
    off, end = hsize, hsize + size
    if end > len(data):
        raise ValueError("truncated: %d of %d bytes" % (len(data), end))
    while off < end:
        kind, _, ehsize, psize = struct.unpack_from("<HHIQ", data, off)
        (sm,) = struct.unpack_from("<I", data, off + 28)
        (flags,) = struct.unpack_from("<I", data, off + 40)
        payload = data[off + ehsize:off + ehsize + psize]
        if kind == 2 and payload[:4] != b"\x7fELF":
            raise ValueError("entry at %d: kind ELF without an ELF image"
                             % off)
        suffix = "a" if flags & ARCH_SPECIFIC else ""
        name = {1: "compute", 2: "sm"}.get(kind)
        if name is None:
            raise ValueError("entry at %d: unknown kind %d" % (off, kind))
        yield "%s_%d%s" % (name, sm, suffix)
        off += ehsize + psize


def main():
    if len(sys.argv) != 2:
        print("usage: fatbin_archs.py FILE.fatbin", file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1], "rb") as f:
            for arch in entries(f.read()):
                print(arch)
    except (OSError, ValueError, struct.error) as e:
        print("fatbin_archs.py: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
