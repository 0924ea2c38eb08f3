"""rtcd's errors as one Python exception carrying the RTCD_ERROR_* name and message."""

from __future__ import annotations

from typing import Dict

from ._native import lib, to_str

__all__ = ["Error", "check", "error_names"]


class Error(Exception):
    """A failing rtcd call.

    Attributes:
        code: the ``rtcd_error`` value (``lib.RTCD_ERROR_*``).
        name: its constant name, e.g. ``"RTCD_ERROR_MESH_OPEN_EDGE"`` (``rtcd_error_name``).
        message: what ``rtcd_last_error_message`` said, naming the offending element.
    """

    def __init__(self, code: int, message: str) -> None:
        self.code = int(code)
        self.name = to_str(lib.rtcd_error_name(code))
        self.message = message
        super().__init__(f"{self.name}: {message}" if message else self.name)

    def __reduce__(self) -> tuple:  # picklable (Ray sends exceptions between processes)
        return (Error, (self.code, self.message))


def check(err: int) -> None:
    """Raises Error for any code but RTCD_OK, with this thread's last message.

    rtcd keeps the message per thread; cffi calls run on the calling thread, so
    the message read here is the failing call's.
    """
    if err != lib.RTCD_OK:
        raise Error(err, to_str(lib.rtcd_last_error_message()))


def invalid(message: str) -> Error:
    """An RTCD_ERROR_INVALID_ARGUMENT raised by the binding itself (checked before the C call)."""
    return Error(lib.RTCD_ERROR_INVALID_ARGUMENT, message)


def error_names() -> Dict[int, str]:
    """Every ``rtcd_error`` code the module knows, with its name."""
    codes = [getattr(lib, k) for k in dir(lib) if k == "RTCD_OK" or k.startswith("RTCD_ERROR_")]
    return {int(c): to_str(lib.rtcd_error_name(c)) for c in codes}
