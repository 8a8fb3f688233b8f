"""The exception hierarchy: one class per engine error class. The embedded database raises
them from the engine's class; the client reads the class from the server's reply."""

from __future__ import annotations

import re

from . import _engram

EngramError = _engram.EngramError
CallerError = _engram.CallerError
ConflictError = _engram.ConflictError
LimitError = _engram.LimitError
OperatorError = _engram.OperatorError
CorruptionError = _engram.CorruptionError
BugError = _engram.BugError

# The server writes a query error as `ERR <Kind> at <line>:<column>: <message> (<phase>: <detail>)`.
_QUERY_ERROR = re.compile(r"^ERR (\w+Error|ParameterMissing|ConstraintValidationFailed)(?: at (\d+):(\d+))?: ")
_QUERY_KINDS = {"LimitError": LimitError, "ConstraintValidationFailed": ConflictError}
_BY_CLASS = {
    "caller": CallerError,
    "conflict": ConflictError,
    "limit": LimitError,
    "operator": OperatorError,
    "corruption": CorruptionError,
    "bug": BugError,
}
_CONFLICT = ("already exists", "lifecycle only moves", "duplicate id", "was merged into", "supersede itself")


def of_class(klass: str, message: str) -> EngramError:
    """The exception of the engine's error class named `klass` (`caller`, `conflict`, …)."""
    err = _BY_CLASS.get(klass, BugError)(message)
    err.klass = klass
    return err


def from_reply(message: str) -> EngramError:
    """The exception for a server's error reply (its text; the class is read from its form)."""
    text = message
    m = _QUERY_ERROR.match(text)
    kind = line = column = None
    if m:
        kind = m.group(1)
        cls = _QUERY_KINDS.get(kind, CallerError)
        line, column = (int(m.group(2)), int(m.group(3))) if m.group(2) else (None, None)
    elif text.startswith("OOM") or "exceeds the limit" in text or "deadline" in text or "too many pending" in text:
        cls = LimitError
    elif text.startswith(("NOPERM", "NOAUTH", "WRONGPASS")):
        cls = CallerError
    elif any(c in text for c in _CONFLICT):
        cls = ConflictError
    elif "corrupt" in text or "checksum" in text:
        cls = CorruptionError
    else:
        cls = CallerError
    body = text.split(" ", 1)[1] if text.split(" ", 1)[0].isupper() and " " in text else text
    err = of_class(next(k for k, c in _BY_CLASS.items() if c is cls), body)
    if kind:
        err.kind, err.line, err.column = kind, line, column
    return err
