/**
 * A small evaluator for the Python-style arithmetic that task.yaml uses in `where` filters and
 * argument values (`rows*cols <= 4_000_000`, `B*Sq <= 32768 and not causal`). It supports numbers,
 * names, + - * / // % **, comparisons (chained), and/or/not, `a if c else b`, parentheses,
 * True/False, the constants pi, e, inf and the functions of harness/task/exprs.py (sqrt exp log log2
 * log10 ceil floor isqrt prod min max abs int float round bool, also as math.<name>). Anything else
 * is an error naming the expression, as on the harness's side.
 */

type Value = number | boolean;
type Token = { kind: 'num'; value: number } | { kind: 'name'; value: string } | { kind: 'op'; value: string };

const OPS = ['**', '//', '<=', '>=', '==', '!=', '+', '-', '*', '/', '%', '<', '>', '(', ')', ',', '.'];

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const num = /^(\d[\d_]*(\.\d[\d_]*)?([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)/.exec(src.slice(i));
    if (num) {
      tokens.push({ kind: 'num', value: Number(num[0].replaceAll('_', '')) });
      i += num[0].length;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (name) {
      tokens.push({ kind: 'name', value: name[0] });
      i += name[0].length;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new Error(`unexpected character '${c}' at position ${i}`);
    tokens.push({ kind: 'op', value: op });
    i += op.length;
  }
  return tokens;
}

const FUNCTIONS: Record<string, (...args: number[]) => number> = {
  min: Math.min,
  max: Math.max,
  abs: Math.abs,
  sqrt: Math.sqrt,
  int: Math.trunc,
  float: (x) => x,
  ceil: Math.ceil,
  floor: Math.floor,
  exp: Math.exp,
  log: (x, base) => (base === undefined ? Math.log(x) : Math.log(x) / Math.log(base)),
  log2: Math.log2,
  log10: Math.log10,
  isqrt: (x) => Math.floor(Math.sqrt(x)),
  prod: (...xs) => xs.reduce((a, b) => a * b, 1),
  // Python rounds half to even.
  round: (x, digits = 0) => {
    const f = 10 ** digits;
    const y = x * f;
    const r = Math.round(y);
    return (Math.abs(y % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r) / f;
  },
  bool: (x) => Number(Boolean(x)),
};
const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E, inf: Infinity };

const num = (v: Value): number => (typeof v === 'boolean' ? Number(v) : v);

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[], private readonly vars: Record<string, Value>) {}

  parse(): Value {
    const v = this.ternary();
    if (this.pos < this.tokens.length) throw new Error(`unexpected '${this.peekText()}'`);
    return v;
  }

  private peekText(): string {
    const t = this.tokens[this.pos];
    return t ? String(t.value) : 'end of expression';
  }

  private isWord(word: string): boolean {
    const t = this.tokens[this.pos];
    return t?.kind === 'name' && t.value === word;
  }

  private isOp(op: string): boolean {
    const t = this.tokens[this.pos];
    return t?.kind === 'op' && t.value === op;
  }

  private expectOp(op: string): void {
    if (!this.isOp(op)) throw new Error(`expected '${op}', found '${this.peekText()}'`);
    this.pos++;
  }

  /** `a if c else b`: the lowest precedence, as in Python. */
  private ternary(): Value {
    const value = this.or();
    if (!this.isWord('if')) return value;
    this.pos++;
    const cond = this.or();
    if (!this.isWord('else')) throw new Error(`expected 'else', found '${this.peekText()}'`);
    this.pos++;
    const other = this.ternary();
    return cond ? value : other;
  }

  private or(): Value {
    let left = this.and();
    while (this.isWord('or')) {
      this.pos++;
      const right = this.and();
      left = Boolean(left) || Boolean(right);
    }
    return left;
  }

  private and(): Value {
    let left = this.not();
    while (this.isWord('and')) {
      this.pos++;
      const right = this.not();
      left = Boolean(left) && Boolean(right);
    }
    return left;
  }

  private not(): Value {
    if (this.isWord('not')) {
      this.pos++;
      return !this.not();
    }
    return this.comparison();
  }

  private comparison(): Value {
    let left = this.sum();
    let result: boolean | undefined;
    for (;;) {
      const t = this.tokens[this.pos];
      if (t?.kind !== 'op' || !['<', '>', '<=', '>=', '==', '!='].includes(t.value)) break;
      this.pos++;
      const right = this.sum();
      const a = num(left);
      const b = num(right);
      const ok = { '<': a < b, '>': a > b, '<=': a <= b, '>=': a >= b, '==': a === b, '!=': a !== b }[t.value]!;
      result = (result ?? true) && ok;
      left = right;
    }
    return result ?? left;
  }

  private sum(): Value {
    let left = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = (this.tokens[this.pos++] as { value: string }).value;
      const right = num(this.term());
      left = op === '+' ? num(left) + right : num(left) - right;
    }
    return left;
  }

  private term(): Value {
    let left = this.unary();
    while (this.isOp('*') || this.isOp('/') || this.isOp('//') || this.isOp('%')) {
      const op = (this.tokens[this.pos++] as { value: string }).value;
      const a = num(left);
      const b = num(this.unary());
      if (op !== '*' && b === 0) throw new Error('division by zero');
      left = op === '*' ? a * b : op === '/' ? a / b : op === '//' ? Math.floor(a / b) : a - b * Math.floor(a / b);
    }
    return left;
  }

  private unary(): Value {
    if (this.isOp('-')) {
      this.pos++;
      return -num(this.unary());
    }
    if (this.isOp('+')) {
      this.pos++;
      return num(this.unary());
    }
    return this.power();
  }

  private power(): Value {
    const base = this.atom();
    if (this.isOp('**')) {
      this.pos++;
      return num(base) ** num(this.unary());
    }
    return base;
  }

  private atom(): Value {
    const t = this.tokens[this.pos];
    if (!t) throw new Error('unexpected end of expression');
    this.pos++;
    if (t.kind === 'num') return t.value;
    if (t.kind === 'op' && t.value === '(') {
      const v = this.ternary();
      this.expectOp(')');
      return v;
    }
    if (t.kind === 'name') {
      if (t.value === 'True') return true;
      if (t.value === 'False') return false;
      let name = t.value;
      if (name === 'math' && this.isOp('.')) {
        this.pos++;
        const attr = this.tokens[this.pos++];
        if (attr?.kind !== 'name' || !(attr.value in FUNCTIONS || attr.value in CONSTANTS)) throw new Error(`only math.<function> attributes are allowed, not math.${String(attr?.value ?? '')}`);
        name = attr.value;
      }
      if (name in CONSTANTS && !(name in this.vars)) return CONSTANTS[name]!;
      const fn = FUNCTIONS[name];
      if (fn && this.isOp('(')) {
        this.pos++;
        const args: number[] = [];
        if (!this.isOp(')')) {
          args.push(num(this.ternary()));
          while (this.isOp(',')) {
            this.pos++;
            args.push(num(this.ternary()));
          }
        }
        this.expectOp(')');
        return fn(...args);
      }
      if (!(name in this.vars)) throw new Error(`unknown name '${name}'${Object.keys(this.vars).length ? `; known: ${Object.keys(this.vars).sort().join(', ')}` : ''}`);
      return this.vars[name]!;
    }
    throw new Error(`unexpected '${t.value}'`);
  }
}

/** Evaluates `expr` with `vars`; throws an Error whose message names the problem. */
export function evaluateExpression(expr: string, vars: Record<string, Value>): Value {
  try {
    return new Parser(tokenize(expr), vars).parse();
  } catch (error) {
    throw new Error(`cannot evaluate "${expr}": ${(error as Error).message}`);
  }
}
