"""Read-only data: what views and public events are made of, so that a value shared
between callers cannot be changed by one of them under the others."""

from __future__ import annotations


class Frozen(dict):
    """A dict that refuses changes. Still a dict: JSON and templates read it as usual."""

    __slots__ = ()

    def _read_only(self, *args, **kwargs):
        raise TypeError("read-only data: copy it with dict(...) to change it")

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __reduce__(self):
        return (Frozen, (dict(self),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def freeze(data):
    """A read-only deep copy of JSON-like data (dicts become Frozen, lists tuples)."""
    if isinstance(data, dict):
        return Frozen({k: freeze(v) if isinstance(v, _NESTED) else v for k, v in data.items()})
    if isinstance(data, list | tuple):
        return tuple(freeze(v) if isinstance(v, _NESTED) else v for v in data)
    return data


_NESTED = (dict, list, tuple)
