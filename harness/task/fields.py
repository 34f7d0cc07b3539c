"""Typed access to task.yaml mappings, with errors that name the file and the field's path."""

import difflib

from ..errors import TaskError


class Fields:
    """Typed access to one YAML mapping, with errors that name the field's path."""

    def __init__(self, where, path, data, known=None, warnings=None):
        self.where, self.path = where, path
        if not isinstance(data, dict):
            self.fail("", f"expected a mapping, got {type(data).__name__}")
        self.data = data
        if known is not None and warnings is not None:
            for key in data:
                if key not in known:
                    close = difflib.get_close_matches(str(key), known, n=1)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    warnings.append(f"{where}: {self._name(key)}: unknown field ignored{hint}")

    def _name(self, key):
        return f"{self.path}.{key}" if self.path and key else (self.path or str(key))

    def fail(self, key, message):
        raise TaskError(self.where, f"{self._name(key) or '(top level)'}: {message}")

    def get(self, key, types, default=None, required=False):
        if key not in self.data or self.data[key] is None:
            if required:
                self.fail(key, "is required")
            return default
        value = self.data[key]
        if isinstance(value, bool) and bool not in _as_tuple(types):
            self.fail(key, f"expected {_type_names(types)}, got a boolean")
        if not isinstance(value, types):
            self.fail(key, f"expected {_type_names(types)}, got {type(value).__name__} {value!r}")
        return value

    def number(self, key, default=None, required=False, minimum=None, positive=False):
        value = self.get(key, (int, float), default, required)
        if value is None:
            return None
        if positive and not value > 0:
            self.fail(key, f"must be > 0, got {value!r}")
        if minimum is not None and value < minimum:
            self.fail(key, f"must be >= {minimum}, got {value!r}")
        return value

    def choice(self, key, choices, default=None, required=False):
        value = self.get(key, str, default, required)
        if value is not None and value not in choices:
            self.fail(key, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def string_list(self, key, default=()):
        value = self.get(key, list, list(default))
        for i, item in enumerate(value):
            if not isinstance(item, str):
                self.fail(f"{key}[{i}]", f"expected a string, got {item!r}")
        return value

    def sub(self, key, known=None, warnings=None, required=False):
        value = self.get(key, dict, {} if not required else None, required)
        return Fields(self.where, self._name(key), value, known, warnings)


def _as_tuple(types):
    return types if isinstance(types, tuple) else (types,)


def _type_names(types):
    if set(_as_tuple(types)) == {int, float}:
        return "a number"
    return " or ".join({"str": "a string", "int": "an integer", "float": "a number", "dict": "a mapping",
                        "list": "a list", "bool": "a boolean"}.get(t.__name__, t.__name__)
                       for t in _as_tuple(types))
