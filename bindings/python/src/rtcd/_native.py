"""The compiled cffi module and small helpers between numpy arrays and C pointers."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from ._rtcd_cffi import ffi, lib  # type: ignore[import-not-found]

ArrayLike = npt.ArrayLike

__all__ = ["ffi", "lib", "Handle", "as_array", "float_ptr", "uint_ptr", "out_float_ptr", "to_str"]


class Handle:
    """One reference to an rtcd object (a ``ffi.gc`` pointer in ``_ptr``):
    released when this Python object goes, or at once by :meth:`close`;
    after that :attr:`handle` raises ValueError and no call reaches C."""

    __slots__ = ("_ptr", "__weakref__")
    _kind = "handle"  # what the closed message names

    @property
    def handle(self) -> Any:
        """The C pointer (valid while this object is open)."""
        if self._ptr is None:
            raise ValueError(f"the {self._kind} was closed")
        return self._ptr

    def close(self) -> None:
        """Drops this object's reference now (other holders on the C side keep theirs)."""
        if self._ptr is not None:
            ffi.release(self._ptr)
            self._ptr = None


def as_array(values: ArrayLike, dtype: Any, shape: Sequence[Optional[int]], what: str) -> np.ndarray:
    """``values`` as a C-contiguous array of ``dtype``; None in ``shape`` is any size.

    Raises ValueError naming ``what`` when the shape does not fit.
    """
    a = np.ascontiguousarray(values, dtype=dtype)
    if a.ndim != len(shape) or any(want is not None and got != want for got, want in zip(a.shape, shape)):
        dims = ", ".join("N" if s is None else str(s) for s in shape)
        raise ValueError(f"{what}: expected an array of shape ({dims}), got {a.shape}")
    return a


def float_ptr(a: np.ndarray) -> Any:
    """A ``const float*`` over a contiguous float32 array (valid while ``a`` lives)."""
    assert a.dtype == np.float32 and a.flags.c_contiguous
    return ffi.cast("const float*", ffi.from_buffer(a))


def uint_ptr(a: np.ndarray) -> Any:
    """A ``const uint32_t*`` over a contiguous uint32 array (valid while ``a`` lives)."""
    assert a.dtype == np.uint32 and a.flags.c_contiguous
    return ffi.cast("const uint32_t*", ffi.from_buffer(a))


def out_float_ptr(a: np.ndarray) -> Any:
    """A ``float*`` the C side writes into (a contiguous, writable float32 array)."""
    assert a.dtype == np.float32 and a.flags.c_contiguous and a.flags.writeable
    return ffi.cast("float*", ffi.from_buffer(a, require_writable=True))


def to_str(p: Any) -> str:
    """A C string (NULL: "") as str."""
    return "" if p == ffi.NULL else ffi.string(p).decode("utf-8", "replace")


def c_string(s: Optional[Union[str, bytes]]) -> Any:
    """A NUL-terminated copy for the duration of a call; NULL for None."""
    if s is None:
        return ffi.NULL
    return ffi.new("char[]", s.encode("utf-8") if isinstance(s, str) else s)
