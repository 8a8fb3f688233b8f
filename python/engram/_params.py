"""Query parameters as JSON (the server's `PARAMS`, a transaction's statements): Python's
`datetime`, `date`, `time` and `timedelta` as the tagged objects the engine reads as temporal
values (`{"$datetime": "2024-05-06T07:08:09+02:00"}`, with `[Europe/Berlin]` after it when the
time zone is a `zoneinfo.ZoneInfo`), the same text the embedded back end reads."""

from __future__ import annotations

import datetime as _dt
import json


def _temporal(v):
    if isinstance(v, _dt.datetime):
        if v.utcoffset() is None:
            return {"$localdatetime": v.isoformat()}
        # A `zoneinfo.ZoneInfo` names its zone: kept, so the value stays in that zone.
        key = getattr(v.tzinfo, "key", None)
        return {"$datetime": v.isoformat() + (f"[{key}]" if isinstance(key, str) else "")}
    if isinstance(v, _dt.date):
        return {"$date": v.isoformat()}
    if isinstance(v, _dt.time):
        return {"$time" if v.utcoffset() is not None else "$localtime": v.isoformat()}
    if isinstance(v, _dt.timedelta):
        return {"$duration": f"P{v.days}DT{v.seconds}.{v.microseconds:06d}S"}
    raise TypeError(f"a {type(v).__name__} is not a query value (None, bool, int, float, str, list, dict, datetime, date, time, timedelta)")


def dumps(params: dict) -> str:
    """`params` as a JSON object; raises TypeError or ValueError on a value JSON cannot hold."""
    return json.dumps(params, default=_temporal)
