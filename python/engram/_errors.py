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
_CONFLICT = ("already exists", "lifecycle only moves", "duplicate id", "was merged into", "supersede itself")


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
    err = cls(body)
    err.klass = {CallerError: "caller", ConflictError: "conflict", LimitError: "limit", CorruptionError: "corruption"}[cls]
    if kind:
        err.kind, err.line, err.column = kind, line, column
    return err
