"""Validate a result against harness/schema/eval-1.schema.json (the subset of JSON Schema it uses).

The schema file is the contract the TypeScript side can read too; this small validator keeps the
harness free of a jsonschema dependency.
"""

import json
from pathlib import Path

SCHEMA_PATH = Path(__file__).resolve().parent / "schema" / "eval-1.schema.json"
_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def load_schema():
    return json.loads(SCHEMA_PATH.read_text())


def validate_result(result, schema=None):
    """List of problems ("summary.best_peer: expected string or null, got int"); empty when valid."""
    problems = []
    _check(result, schema or load_schema(), "", problems)
    return problems


def _type_ok(value, name):
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def _check(value, schema, path, problems):
    where = path or "(top level)"
    if "const" in schema and value != schema["const"]:
        problems.append(f"{where}: expected {schema['const']!r}, got {value!r}")
        return
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: {value!r} is not one of {schema['enum']}")
        return
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_type_ok(value, n) for n in names):
            problems.append(f"{where}: expected {' or '.join(names)}, got {type(value).__name__}")
            return
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        problems.append(f"{where}: {value} is below {schema['minimum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{where}: missing {key!r}")
        props = schema.get("properties", {})
        for key, sub in value.items():
            if key in props:
                _check(sub, props[key], f"{path}.{key}" if path else key, problems)
            elif isinstance(schema.get("additionalProperties"), dict):
                _check(sub, schema["additionalProperties"], f"{path}.{key}" if path else key, problems)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _check(item, schema["items"], f"{path}[{i}]", problems)
