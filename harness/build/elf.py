"""A minimal ELF64 reader: symbols and DT_NEEDED, without nm/readelf.

The binary checks must not depend on binutils being installed on a GPU host, and they read only a
few tables, so a small parser is simpler than shelling out and parsing text.
"""

import struct
from dataclasses import dataclass

SHT_SYMTAB, SHT_DYNAMIC, SHT_DYNSYM = 2, 6, 11
DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH = 1, 14, 15, 29
BINDINGS = {0: "local", 1: "global", 2: "weak", 10: "unique"}
TYPES = {0: "notype", 1: "object", 2: "func", 3: "section", 4: "file", 5: "common", 6: "tls", 10: "ifunc"}


class ElfError(ValueError):
    pass


@dataclass(frozen=True)
class Symbol:
    name: str
    binding: str
    type: str
    defined: bool
    visibility: int  # 0 default, 1 internal, 2 hidden, 3 protected


@dataclass
class ElfInfo:
    kind: str        # "relocatable" | "shared" | "executable" | ...
    symbols: list    # from .symtab (objects) or .dynsym (shared libraries)
    needed: list
    rpath: list
    load_bytes: int = 0   # what its loadable segments take in memory once mapped (PT_LOAD p_memsz)

    def undefined(self):
        """Names the file needs from elsewhere (global or weak undefined symbols)."""
        return sorted({s.name for s in self.symbols if not s.defined and s.name and s.binding != "local"})

    def exported(self):
        """Names a shared library offers to others: defined, global/weak, default or protected visibility."""
        return sorted({s.name for s in self.symbols if s.defined and s.name and s.binding != "local"
                       and s.visibility in (0, 3) and s.type not in ("section", "file")})


def read_elf(path):
    with open(path, "rb") as fh:
        data = fh.read()
    return parse_elf(data, str(path))


def parse_elf(data, name="<bytes>"):
    if data[:4] != b"\x7fELF":
        raise ElfError(f"{name}: not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise ElfError(f"{name}: only 64-bit little-endian ELF is supported")
    (e_type,) = struct.unpack_from("<H", data, 16)
    e_shoff, = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if e_shoff == 0 or e_shentsize < 64:
        raise ElfError(f"{name}: no section headers")
    sections = []
    for i in range(e_shnum):
        off = e_shoff + i * e_shentsize
        if off + 64 > len(data):
            raise ElfError(f"{name}: truncated section header table")
        sh_name, sh_type, _flags, _addr, sh_offset, sh_size, sh_link, _info, _align, sh_entsize = \
            struct.unpack_from("<IIQQQQIIQQ", data, off)
        sections.append((sh_name, sh_type, sh_offset, sh_size, sh_link, sh_entsize))

    def strtab(index):
        if not 0 <= index < len(sections):
            raise ElfError(f"{name}: bad string table index {index}")
        _, _, off, size, _, _ = sections[index]
        return data[off:off + size]

    def cstr(table, offset):
        end = table.find(b"\0", offset)
        return table[offset:end if end >= 0 else len(table)].decode("utf-8", "replace")

    kind = {1: "relocatable", 2: "executable", 3: "shared", 4: "core"}.get(e_type, f"type{e_type}")
    # Objects carry their symbols in .symtab; for a shared library only .dynsym matters at load time.
    want = SHT_DYNSYM if kind == "shared" else SHT_SYMTAB
    symbols, needed, rpath = [], [], []
    for _sh_name, sh_type, off, size, link, entsize in sections:
        if sh_type == want:
            names = strtab(link)
            entsize = entsize or 24
            for pos in range(off + entsize, off + size, entsize):  # entry 0 is the null symbol
                st_name, st_info, st_other, st_shndx, _value, _size = struct.unpack_from("<IBBHQQ", data, pos)
                symbols.append(Symbol(
                    name=cstr(names, st_name), binding=BINDINGS.get(st_info >> 4, str(st_info >> 4)),
                    type=TYPES.get(st_info & 0xF, str(st_info & 0xF)), defined=st_shndx != 0,
                    visibility=st_other & 3))
        elif sh_type == SHT_DYNAMIC:
            names = strtab(link)
            for pos in range(off, off + size, 16):
                tag, val = struct.unpack_from("<qQ", data, pos)
                if tag == 0:
                    break
                if tag == DT_NEEDED:
                    needed.append(cstr(names, val))
                elif tag in (DT_RPATH, DT_RUNPATH):
                    rpath.append(cstr(names, val))
    return ElfInfo(kind=kind, symbols=symbols, needed=needed, rpath=rpath, load_bytes=_load_bytes(data, name))


PT_LOAD = 1


def _load_bytes(data, name):
    e_phoff, = struct.unpack_from("<Q", data, 0x20)
    e_phentsize, e_phnum = struct.unpack_from("<HH", data, 0x36)
    total = 0
    for i in range(e_phnum if e_phoff and e_phentsize >= 56 else 0):
        off = e_phoff + i * e_phentsize
        if off + 56 > len(data):
            raise ElfError(f"{name}: truncated program header table")
        p_type, = struct.unpack_from("<I", data, off)
        if p_type == PT_LOAD:
            total += struct.unpack_from("<Q", data, off + 40)[0]
    return total
