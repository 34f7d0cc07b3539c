/**
 * Collects a command's output, keeping the first and last halves of `cap` characters when it is
 * longer: the start shows what ran, the end shows how it ended (errors, summaries).
 */
export class OutputCap {
  private head = '';
  private tail = '';
  private total = 0;
  constructor(private readonly cap: number) {}

  push(chunk: string): void {
    this.total += chunk.length;
    const half = Math.floor(this.cap / 2);
    if (this.head.length < half) {
      const take = chunk.slice(0, half - this.head.length);
      this.head += take;
      chunk = chunk.slice(take.length);
    }
    if (chunk.length > 0) this.tail = (this.tail + chunk).slice(-(this.cap - half));
  }

  get truncated(): boolean {
    return this.total > this.cap;
  }

  text(): string {
    if (!this.truncated) return this.head + this.tail;
    const omitted = this.total - this.head.length - this.tail.length;
    return `${this.head}\n[... ${omitted} characters omitted ...]\n${this.tail}`;
  }
}

/** Caps a finished string the same way. */
export function capText(text: string, cap: number): string {
  const c = new OutputCap(cap);
  c.push(text);
  return c.text();
}

/**
 * Makes command output storable: PostgreSQL text and jsonb refuse NUL, so each becomes the two
 * characters `\0` (invalid UTF-8 was already replaced by U+FFFD when decoded).
 */
export function safeToolText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\\0') : text;
}

/**
 * A JSON value made storable the same way, at any depth (keys too): what a harness result carries
 * from a candidate (an exception's text, a print) can hold NUL, which jsonb refuses.
 */
export function storableValue<T>(value: T): T {
  if (typeof value === 'string') return safeToolText(value) as T;
  if (Array.isArray(value)) return value.map((v) => storableValue(v)) as T;
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [safeToolText(k), storableValue(v)])) as T;
  }
  return value;
}
