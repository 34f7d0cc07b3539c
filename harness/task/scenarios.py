"""Scenario expansion (grid blocks, explicit list, where, ids, quick) and selection filters."""

import fnmatch
import itertools
from dataclasses import dataclass

from ..errors import UsageError
from . import exprs


@dataclass(frozen=True)
class Scenario:
    id: str
    params: dict


def expand_scenarios(fields):
    """Expand task.yaml `scenarios` (a fields.Fields view) into (param_names, [Scenario], quick_ids)."""
    params = fields.string_list("params")
    if not params:
        fields.fail("params", "at least one parameter name is required")
    if len(set(params)) != len(params):
        fields.fail("params", f"duplicate names in {params}")
    id_format = fields.get("id", str, required=True)
    combos = []
    for b, block in enumerate(fields.get("grid", list, [])):
        where = f"grid[{b}]"
        if not isinstance(block, dict):
            fields.fail(where, "expected a mapping of param -> list of values")
        cond = block.get("where")
        keys = [k for k in block if k != "where"]
        _check_keys(fields, where, keys, params)
        axes = [v if isinstance(v, list) else [v] for v in (block[p] for p in params)]
        for i, axis in enumerate(axes):
            if not axis:
                fields.fail(f"{where}.{params[i]}", "empty list of values")
        compiled = None
        if cond is not None:
            try:
                compiled = exprs.compile_expression(cond)
            except exprs.ExpressionError as exc:
                fields.fail(f"{where}.where", str(exc))
        for values in itertools.product(*axes):
            combo = dict(zip(params, values))
            if compiled is not None:
                try:
                    keep = exprs.evaluate(compiled, combo)
                except exprs.ExpressionError as exc:
                    fields.fail(f"{where}.where", str(exc))
                if not keep:
                    continue
            combos.append((where, combo))
    for i, item in enumerate(fields.get("list", list, [])):
        where = f"list[{i}]"
        if not isinstance(item, dict):
            fields.fail(where, "expected a mapping of param -> value")
        _check_keys(fields, where, list(item), params)
        combos.append((where, {p: item[p] for p in params}))
    if not combos:
        fields.fail("", "no scenarios: give a non-empty grid or list")

    scenarios, seen = [], {}
    for where, combo in combos:
        for p, v in combo.items():
            if isinstance(v, (list, dict)) or v is None:
                fields.fail(f"{where}.{p}", f"a scenario value must be a number, boolean or string, got {v!r}")
        try:
            sid = id_format.format(**combo)
        except (KeyError, IndexError, ValueError) as exc:
            fields.fail("id", f"{id_format!r} cannot be formatted with {combo}: {exc!r}")
        if not sid or any(ch.isspace() or ch in "/\\\"'," for ch in sid):
            fields.fail("id", f"scenario id {sid!r} ({where}) contains spaces, quotes, commas or slashes")
        if sid in seen:
            fields.fail("id", f"scenario id {sid!r} is produced by both {seen[sid]} and {where}: "
                              f"ids must be unique")
        seen[sid] = where
        scenarios.append(Scenario(sid, combo))

    quick = fields.string_list("quick")
    for i, qid in enumerate(quick):
        if qid not in seen:
            close = [s.id for s in scenarios if qid in s.id or s.id in qid][:3]
            fields.fail(f"quick[{i}]", f"{qid!r} is not a scenario id" +
                        (f" (close: {', '.join(close)})" if close else ""))
    return params, scenarios, quick


def _check_keys(fields, where, keys, params):
    missing = [p for p in params if p not in keys]
    extra = [k for k in keys if k not in params]
    if missing:
        fields.fail(where, f"missing param(s) {', '.join(missing)}")
    if extra:
        fields.fail(where, f"unknown param(s) {', '.join(map(str, extra))}; params are {', '.join(params)}")


def select_scenarios(task, selector):
    """Filter a task's scenarios: 'all', 'quick', or comma-separated substrings / globs over ids."""
    selector = (selector or "all").strip()
    if selector == "all":
        return list(task.scenarios)
    if selector == "quick":
        if not task.quick:
            raise UsageError(f"task {task.name} defines no quick subset (scenarios.quick in task.yaml)")
        wanted = set(task.quick)
        return [s for s in task.scenarios if s.id in wanted]
    patterns = [p.strip() for p in selector.split(",") if p.strip()]
    chosen = []
    for s in task.scenarios:
        for p in patterns:
            glob = any(ch in p for ch in "*?[")
            if (glob and fnmatch.fnmatchcase(s.id, p)) or (not glob and p in s.id):
                chosen.append(s)
                break
    if not chosen:
        examples = ", ".join(s.id for s in task.scenarios[:4])
        raise UsageError(f"no scenario of task {task.name} matches {selector!r} "
                         f"({len(task.scenarios)} scenarios, e.g. {examples})")
    return chosen

