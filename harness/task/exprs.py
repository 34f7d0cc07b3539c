"""Small, safe expressions from task.yaml (`where`, metrics, argument values).

Task files are trusted, but an expression is still evaluated from its syntax tree with an explicit
whitelist, so that a typo gives a clear error naming the expression instead of a Python traceback,
and nothing but arithmetic, comparisons and math functions can run.
"""

import ast
import math
import operator

_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Not: operator.not_}
_COMPARE = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}
_MATH_NAMES = (
    "sqrt", "exp", "log", "log2", "log10", "ceil", "floor", "pi", "e", "inf", "isqrt", "prod",
)
FUNCTIONS = {name: getattr(math, name) for name in _MATH_NAMES if hasattr(math, name)}
FUNCTIONS.update({"min": min, "max": max, "abs": abs, "int": int, "float": float, "round": round,
                  "bool": bool, "True": True, "False": False})


class ExpressionError(ValueError):
    """The expression is malformed or uses something outside the whitelist."""


def compile_expression(text):
    """Parse `text` once; returns a tree evaluate() accepts. Raises ExpressionError."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise ExpressionError(f"expected an expression string or a number, got {text!r}")
    source = str(text)
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"syntax error in {source!r}: {exc.msg}") from None
    _check(tree.body, source)
    return tree.body, source


def _check(node, source):
    allowed = (ast.Constant, ast.Name, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp,
               ast.Call, ast.Attribute)
    for sub in ast.walk(node):
        if isinstance(sub, ast.expr) and not isinstance(sub, allowed):
            raise ExpressionError(f"{type(sub).__name__} is not allowed in {source!r}")
        if isinstance(sub, ast.Attribute) and not (
                isinstance(sub.value, ast.Name) and sub.value.id == "math" and sub.attr in FUNCTIONS):
            raise ExpressionError(f"only math.<function> attributes are allowed in {source!r}")
        if isinstance(sub, ast.Call) and (sub.keywords or not isinstance(sub.func, (ast.Name, ast.Attribute))):
            raise ExpressionError(f"only plain calls of math functions are allowed in {source!r}")


def evaluate(compiled, names):
    """Evaluate a compile_expression() result with the given variables (scenario params)."""
    node, source = compiled
    try:
        return _eval(node, names)
    except ExpressionError:
        raise
    except KeyError as exc:
        raise ExpressionError(f"unknown name {exc.args[0]!r} in {source!r}; known: "
                              f"{', '.join(sorted(names))}") from None
    except (ArithmeticError, TypeError, ValueError) as exc:
        raise ExpressionError(f"{source!r} failed: {exc}") from None


def evaluate_text(text, names):
    return evaluate(compile_expression(text), names)


def _eval(node, names):
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, (int, float, bool)):
            raise ExpressionError(f"constant {node.value!r} is not a number")
        return node.value
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        if node.id in FUNCTIONS:
            return FUNCTIONS[node.id]
        raise KeyError(node.id)
    if isinstance(node, ast.Attribute):
        return FUNCTIONS[node.attr]
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_eval(node.left, names), _eval(node.right, names))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_eval(node.operand, names))
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, names) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, names)
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, names)
            if type(op) not in _COMPARE:
                raise ExpressionError(f"comparison {type(op).__name__} is not allowed")
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body, names) if _eval(node.test, names) else _eval(node.orelse, names)
    if isinstance(node, ast.Call):
        func = _eval(node.func, names)
        if not callable(func):
            raise ExpressionError(f"{ast.dump(node.func)} is not a function")
        return func(*(_eval(a, names) for a in node.args))
    raise ExpressionError(f"{type(node).__name__} is not allowed")
