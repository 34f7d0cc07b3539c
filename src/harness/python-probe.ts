import { execa } from 'execa';
import type { CheckProblem } from './check-problem.js';

/**
 * Reads a task's Python files without running them: Python's own parser (the `ast` module, no
 * torch, no import of the file) says whether reference.py, a Python baseline or peer and a Triton
 * kernel parse, and which functions they define with how many parameters. Fast (one python3 start)
 * and safe on any host that has python3, so it runs before every run, not only in `tasks --check`.
 */

export interface ProbeFunction {
  /** The file, relative to the task folder. */
  file: string;
  name: string;
  /** Positional arguments the harness passes. */
  args: number;
  /** task.yaml's field that names it (empty for reference.py's contract functions). */
  field: string;
  /** What the harness calls it with, for the fix: `make_inputs(scenario, seed, device)`. */
  call: string;
  /** Whether the function must carry @triton.jit kernels beside it (a Triton entry). */
  triton?: boolean;
}

export interface ProbeRequest {
  taskDir: string;
  /** Files to parse (relative to taskDir), each with the functions it must define. */
  functions: ProbeFunction[];
  /** Modules named by `python:module:fn` (not files): looked up, not imported. */
  modules: { module: string; name: string; field: string }[];
}

export type ProbeFinding = CheckProblem;

const SCRIPT = String.raw`
import ast, importlib.util, json, os, sys

req = json.load(sys.stdin)
out = []
parsed = {}

def problem(sev, file, line, field, message, fix):
    out.append({"severity": sev, "file": file, "line": line, "field": field, "message": message, "fix": fix})

def parse(rel):
    if rel in parsed:
        return parsed[rel]
    path = os.path.join(req["taskDir"], rel)
    tree = None
    try:
        with open(path, encoding="utf-8") as f:
            src = f.read()
        tree = ast.parse(src, filename=rel)
    except FileNotFoundError:
        problem("error", rel, None, "", "file not found", "create it in the task folder (see docs/tasks.md)")
    except SyntaxError as e:
        problem("error", rel, e.lineno, "", "syntax error: %s%s" % (e.msg, (" (column %d)" % e.offset) if e.offset else ""),
                "fix the Python at that line; python3 -m py_compile %s shows the same" % rel)
    except (UnicodeDecodeError, ValueError) as e:
        problem("error", rel, None, "", "cannot be read as Python: %s" % e, "save it as UTF-8 text")
    parsed[rel] = tree
    return tree

def defs(tree):
    return {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}

def assigned(tree):
    names = set()
    for n in tree.body:
        if isinstance(n, ast.Assign):
            names.update(t.id for t in n.targets if isinstance(t, ast.Name))
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in n.names)
    return names

def is_jit(fn):
    for d in fn.decorator_list:
        t = d.func if isinstance(d, ast.Call) else d
        if (isinstance(t, ast.Attribute) and t.attr in ("jit", "autotune", "heuristics")) or (isinstance(t, ast.Name) and t.id in ("jit", "autotune")):
            return True
    return False

for f in req["functions"]:
    tree = parse(f["file"])
    if tree is None:
        continue
    found = defs(tree).get(f["name"])
    if found is None:
        if f["name"] in assigned(tree):
            continue  # an alias or an import: its signature is not known here
        known = sorted(n for n in defs(tree) if not n.startswith("_"))
        problem("error", f["file"], None, f["field"], "function %s() is not defined" % f["name"],
                "define def %s: ...%s" % (f["call"], (" (functions there: %s)" % ", ".join(known)) if known else ""))
        continue
    a = found.args
    positional = len(getattr(a, "posonlyargs", [])) + len(a.args)
    required = positional - len(a.defaults)
    if f["args"] < required or (f["args"] > positional and not a.vararg):
        problem("error", f["file"], found.lineno, f["field"],
                "%s() takes %d positional argument%s; the harness calls it with %d: %s" % (f["name"], positional, "" if positional == 1 else "s", f["args"], f["call"]),
                "give it the signature def %s:" % f["call"])
    if f.get("triton") and not any(is_jit(n) for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        problem("warning", f["file"], found.lineno, f["field"], "no @triton.jit kernel in the file",
                "a Triton candidate launches @triton.jit kernels from its entry function")

for m in req["modules"]:
    top = m["module"].split(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        problem("warning", "task.yaml", None, m["field"], "module %s is not importable with %s on this host" % (top, sys.executable),
                "install it where the harness runs (every evaluation host), or name a file in the task folder: %s" % "<file.py>:" + m["name"])

json.dump({"problems": out}, sys.stdout)
`;

/** Runs the probe with `python`; undefined when python cannot run it (then the harness says more). */
export async function probePythonFiles(python: string, request: ProbeRequest, env: Record<string, string>): Promise<ProbeFinding[] | undefined> {
  if (request.functions.length === 0 && request.modules.length === 0) return [];
  const r = await execa(python, ['-I', '-c', SCRIPT], { input: JSON.stringify(request), env, extendEnv: false, reject: false, timeout: 30_000 });
  if (r.exitCode !== 0) return undefined;
  try {
    const parsed = JSON.parse(String(r.stdout)) as { problems: (ProbeFinding & { line: number | null; field: string })[] };
    return parsed.problems.map((p) => ({ ...p, line: p.line ?? undefined, field: p.field || undefined }));
  } catch {
    return undefined;
  }
}
