"""MPFR's C API for compiled code: the library gmpy2's wheel ships, loaded once, and its functions
declared to numba by symbol name (so the loops calling them are cached like any other kernel).

An mpfr_t on the 64-bit platforms numba runs on is {long prec; int sign; long exp; limb *d}, 32
bytes: the engines keep their numbers as rows of an int64 array (N, 4) and pass their addresses as
integers (a pointer and an int64 travel alike in the calling conventions concerned). mpfr_init2
allocates the limbs; mpfr_clear frees them (MpfrNumbers does both). Numbers are exchanged with
the rest of the program as MPFR hexadecimal strings, which gmpy2 reads and writes too.

`LIBRARY` is None where no library was found (`WHY_NOT` says why): the reference then runs
reference_gmpy2.py's Python loop.
"""
from __future__ import annotations

import ctypes
import glob
import os
import weakref

import numpy as np
from numba import types

RNDN = 0            # MPFR_RNDN, round to nearest
STRUCT_WORDS = 4    # int64 words in an mpfr_t


def _candidates() -> list[str]:
    """Paths of libmpfr next to gmpy2 (its wheel's own copy first), then the system's."""
    out: list[str] = []
    try:
        import gmpy2
    except ImportError:
        return out
    pkg = os.path.dirname(gmpy2.__file__)
    site = os.path.dirname(pkg)
    for pattern in (os.path.join(site, "gmpy2.libs", "libmpfr*.so*"),       # Linux wheels
                    os.path.join(pkg, ".dylibs", "libmpfr*.dylib"),          # macOS wheels
                    os.path.join(site, "gmpy2.libs", "*mpfr*.dll"),          # Windows wheels
                    os.path.join(pkg, "*mpfr*.dll")):
        out.extend(sorted(glob.glob(pattern)))
    import ctypes.util
    found = ctypes.util.find_library("mpfr")
    if found:
        out.append(found)
    return out


def _load():
    if ctypes.sizeof(ctypes.c_long) != 8 or ctypes.sizeof(ctypes.c_void_p) != 8:
        return None, "MPFR's C API is used only where long and pointers are 64 bits"
    tried = _candidates()
    for path in tried:
        try:
            lib = ctypes.CDLL(path)
            lib.mpfr_sqr, lib.mpfr_get_d, lib.mpfr_init2     # all present?
            if _version(lib) < (4, 0):
                continue
            import llvmlite.binding as llvm
            llvm.load_library_permanently(path)
            return lib, ""
        except (OSError, AttributeError, RuntimeError):
            continue
    if not tried:
        return None, "no MPFR library was found beside gmpy2 or on the system"
    return None, f"no usable MPFR 4 library among {', '.join(tried)}"


def _version(lib) -> tuple[int, ...]:
    lib.mpfr_get_version.restype = ctypes.c_char_p
    return tuple(int(p) for p in lib.mpfr_get_version().decode().split(".")[:2])


LIBRARY, WHY_NOT = _load()

# the functions the compiled loops call, by symbol (args: addresses as int64, then the rounding)
_P = types.int64
_R = types.int32
sqr = types.ExternalFunction("mpfr_sqr", types.int32(_P, _P, _R))
mul = types.ExternalFunction("mpfr_mul", types.int32(_P, _P, _P, _R))
add = types.ExternalFunction("mpfr_add", types.int32(_P, _P, _P, _R))
sub = types.ExternalFunction("mpfr_sub", types.int32(_P, _P, _P, _R))
mul_2si = types.ExternalFunction("mpfr_mul_2si", types.int32(_P, _P, types.int64, _R))
get_d = types.ExternalFunction("mpfr_get_d", types.float64(_P, _R))
get_exp = types.ExternalFunction("mpfr_get_exp", types.int64(_P))       # regular numbers only
zero_p = types.ExternalFunction("mpfr_zero_p", types.int32(_P))


class MpfrNumbers:
    """`count` MPFR numbers of `precision` bits in one int64 array; `addr[i]` is number i's
    address. Freed (mpfr_clear) when this object goes."""

    def __init__(self, count: int, precision: int):
        lib = LIBRARY
        if lib is None:
            raise RuntimeError(f"MPFR's library is not available: {WHY_NOT}")
        self.precision = int(precision)
        self.structs = np.zeros((count, STRUCT_WORDS), dtype=np.int64)
        base = self.structs.ctypes.data
        self.addr = np.array([base + 8 * STRUCT_WORDS * i for i in range(count)], dtype=np.int64)
        init2 = lib.mpfr_init2
        init2.argtypes = [ctypes.c_void_p, ctypes.c_long]
        for a in self.addr:
            init2(int(a), self.precision)
        self._free = weakref.finalize(self, _clear_all, lib, self.structs, [int(a) for a in self.addr])

    def set_hex(self, i: int, text: str) -> None:
        """Number i from an MPFR hex string ("0x1.8p-3", "-0x0.abcp+4", "0")."""
        f = LIBRARY.mpfr_set_str
        f.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        if f(int(self.addr[i]), text.strip().encode(), 16, RNDN) != 0:
            raise ValueError(f"not an MPFR hexadecimal number: {text[:40]!r}")

    def hex(self, i: int) -> str:
        """Number i exactly, as an MPFR hex string that set_hex and gmpy2.mpfr(s, prec, 16) read."""
        lib = LIBRARY
        exp = ctypes.c_long(0)
        f = lib.mpfr_get_str
        f.restype = ctypes.c_void_p
        f.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_long), ctypes.c_int, ctypes.c_size_t,
                      ctypes.c_void_p, ctypes.c_int]
        p = f(None, ctypes.byref(exp), 16, 0, int(self.addr[i]), RNDN)
        try:
            digits = ctypes.string_at(p).decode()
        finally:
            lib.mpfr_free_str.argtypes = [ctypes.c_void_p]
            lib.mpfr_free_str(p)
        sign = "-" if digits.startswith("-") else ""
        digits = digits.lstrip("-").rstrip("0")
        if not digits:
            return "0x0p+0"
        if not all(ch in "0123456789abcdefABCDEF" for ch in digits):
            raise ValueError(f"MPFR number {i} is not finite ({digits[:12]})")
        return f"{sign}0x0.{digits}p{4 * exp.value:+d}"

    def copy(self, dst: int, src: int) -> None:
        f = LIBRARY.mpfr_set
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        f(int(self.addr[dst]), int(self.addr[src]), RNDN)


def _clear_all(lib, structs, addrs) -> None:
    clear = lib.mpfr_clear
    clear.argtypes = [ctypes.c_void_p]
    for a in addrs:
        clear(a)
    del structs
