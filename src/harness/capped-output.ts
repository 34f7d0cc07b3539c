/**
 * Collects a process's output up to a byte cap, keeping the head and the tail: the start says what
 * ran, the end says how it finished, and a runaway loop in between cannot exhaust memory.
 */
export class CappedOutput {
  private readonly headCap: number;
  private readonly tailCap: number;
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  /** Every byte seen, kept or not. */
  totalBytes = 0;

  constructor(capBytes: number) {
    this.headCap = Math.floor(capBytes / 2);
    this.tailCap = capBytes - this.headCap;
  }

  append(chunk: Buffer | string): void {
    let buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.totalBytes += buf.length;
    if (this.headBytes < this.headCap) {
      const take = Math.min(buf.length, this.headCap - this.headBytes);
      this.head.push(buf.subarray(0, take));
      this.headBytes += take;
      buf = buf.subarray(take);
    }
    if (buf.length === 0) return;
    this.tail.push(buf);
    this.tailBytes += buf.length;
    // Drop whole chunks from the front of the tail while what remains still covers the cap.
    while (this.tail.length > 1 && this.tailBytes - this.tail[0]!.length >= this.tailCap) {
      this.tailBytes -= this.tail.shift()!.length;
    }
  }

  get truncated(): boolean {
    return this.totalBytes > this.headBytes + Math.min(this.tailBytes, this.tailCap);
  }

  /** The kept text; when bytes were dropped, a line in the middle says how many. */
  text(): string {
    const head = Buffer.concat(this.head);
    let tail = Buffer.concat(this.tail);
    if (tail.length > this.tailCap) tail = tail.subarray(tail.length - this.tailCap);
    const dropped = this.totalBytes - head.length - tail.length;
    if (dropped <= 0) return Buffer.concat([head, tail]).toString('utf8');
    return `${head.toString('utf8')}\n[... ${dropped} bytes of output omitted ...]\n${tail.toString('utf8')}`;
  }
}

/** The last `maxChars` characters of a text, starting at a line boundary where one is near. */
export function tailOf(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const cut = text.slice(text.length - maxChars);
  const nl = cut.indexOf('\n');
  return nl >= 0 && nl < 200 ? cut.slice(nl + 1) : cut;
}
