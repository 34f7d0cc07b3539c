"""Checks task.yaml against harness/schema/task.schema.json, the schema the TypeScript side checks too.

A small validator of the JSON Schema keywords that file uses, rather than the jsonschema package:
the GPU hosts have no internet and Debian's python3-jsonschema is not on them, and the harness must
run from a bare PyTorch install. Messages follow the harness's style (and x-message, the schema's own
wording for a failed pattern), so both sides say the same thing about the same field.
"""

import json
import re
from pathlib import Path

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schema" / "task.schema.json"
_SCHEMA = None

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "null": lambda v: v is None,
}
_NAMES = {"object": "a mapping", "array": "a list", "string": "a string", "boolean": "a boolean",
          "integer": "an integer", "number": "a number", "null": "null"}


def task_schema():
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return _SCHEMA


def _join(path, key):
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _resolve(schema, root):
    ref = schema.get("$ref")
    if ref is None:
        return schema
    node = root
    for part in ref.lstrip("#/").split("/"):
        node = node[part]
    return node


def _describe(value):
    return "a boolean" if isinstance(value, bool) else repr(value)


def problems(value, schema=None, path="", root=None):
    """Every (field path, message) where `value` breaks `schema` (default: the task schema)."""
    root = root if root is not None else (schema if schema is not None else task_schema())
    schema = _resolve(schema if schema is not None else root, root)
    out = []
    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        if not any(_TYPES[t](value) for t in names):
            return [(path, f"expected {' or '.join(_NAMES[t] for t in names)}, got {_describe(value)}")]
    if "const" in schema and value != schema["const"]:
        out.append((path, f"expected {schema['const']!r}, got {value!r}"))
    if "enum" in schema and value not in schema["enum"]:
        out.append((path, f"{value!r} is not one of {', '.join(map(str, schema['enum']))}"))
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            out.append((path, "must not be empty"))
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append((path, f"{value!r} {schema.get('x-message', 'does not match ' + schema['pattern'])}"))
    if _TYPES["number"](value):
        if "exclusiveMinimum" in schema and not value > schema["exclusiveMinimum"]:
            out.append((path, f"must be > {schema['exclusiveMinimum']}, got {value!r}"))
        if "minimum" in schema and value < schema["minimum"]:
            out.append((path, f"must be >= {schema['minimum']}, got {value!r}"))
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            out.append((path, f"needs at least {schema['minItems']} item(s)"))
        if "items" in schema:
            for i, item in enumerate(value):
                out += problems(item, schema["items"], _join(path, i), root)
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value or value[key] is None:
                out.append((_join(path, key), "is required"))
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if item is None:
                continue  # an empty YAML field counts as absent (the harness's own rule)
            if key in props:
                out += problems(item, props[key], _join(path, key), root)
            elif isinstance(extra, dict):
                out += problems(item, extra, _join(path, key), root)
    for sub in schema.get("allOf", ()):
        sub = _resolve(sub, root)
        if "if" in sub:
            if not problems(value, sub["if"], path, root):
                out += problems(value, sub.get("then", {}), path, root)
        else:
            out += problems(value, sub, path, root)
    return out
