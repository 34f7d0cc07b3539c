import { GLYPH_HEIGHT, GLYPH_WIDTH, GLYPHS } from './font.js';

export type Rgb = readonly [number, number, number];

/** An RGB pixel buffer with the few drawing operations a line chart needs. */
export class Raster {
  readonly pixels: Uint8Array;

  constructor(
    readonly width: number,
    readonly height: number,
    background: Rgb = [255, 255, 255],
  ) {
    this.pixels = new Uint8Array(width * height * 3);
    for (let i = 0; i < width * height; i++) this.pixels.set(background, i * 3);
  }

  set(x: number, y: number, c: Rgb): void {
    const xi = Math.round(x);
    const yi = Math.round(y);
    if (xi < 0 || yi < 0 || xi >= this.width || yi >= this.height) return;
    this.pixels.set(c, (yi * this.width + xi) * 3);
  }

  get(x: number, y: number): Rgb {
    const i = (y * this.width + x) * 3;
    return [this.pixels[i]!, this.pixels[i + 1]!, this.pixels[i + 2]!];
  }

  rect(x: number, y: number, w: number, h: number, c: Rgb): void {
    for (let yy = Math.round(y); yy < Math.round(y + h); yy++) for (let xx = Math.round(x); xx < Math.round(x + w); xx++) this.set(xx, yy, c);
  }

  /** A line `thickness` pixels wide; `dash` draws `dash` pixels on, `dash` off. */
  line(x0: number, y0: number, x1: number, y1: number, c: Rgb, thickness = 1, dash = 0): void {
    const steps = Math.max(1, Math.ceil(Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0))));
    const r = (thickness - 1) / 2;
    for (let i = 0; i <= steps; i++) {
      if (dash > 0 && Math.floor(i / dash) % 2 === 1) continue;
      const x = x0 + ((x1 - x0) * i) / steps;
      const y = y0 + ((y1 - y0) * i) / steps;
      for (let dy = -r; dy <= r; dy++) for (let dx = -r; dx <= r; dx++) this.set(x + dx, y + dy, c);
    }
  }

  disc(cx: number, cy: number, radius: number, c: Rgb): void {
    for (let dy = -radius; dy <= radius; dy++) for (let dx = -radius; dx <= radius; dx++) if (dx * dx + dy * dy <= radius * radius) this.set(cx + dx, cy + dy, c);
  }

  cross(cx: number, cy: number, radius: number, c: Rgb): void {
    this.line(cx - radius, cy - radius, cx + radius, cy + radius, c, 2);
    this.line(cx - radius, cy + radius, cx + radius, cy - radius, c, 2);
  }

  /** Width in pixels of `text` drawn at `scale`. */
  static textWidth(text: string, scale: number): number {
    return text.length === 0 ? 0 : (text.length * (GLYPH_WIDTH + 1) - 1) * scale;
  }

  /** Draws `text` with its top-left corner at (x, y). Letters are drawn in upper case except `x`. */
  text(x: number, y: number, text: string, c: Rgb, scale = 2): void {
    let cursor = Math.round(x);
    for (const ch of text) {
      const glyph = GLYPHS[ch] ?? GLYPHS[ch.toUpperCase()];
      if (glyph) {
        for (let row = 0; row < GLYPH_HEIGHT; row++) {
          for (let col = 0; col < GLYPH_WIDTH; col++) {
            if ((glyph[row]! >> (GLYPH_WIDTH - 1 - col)) & 1) this.rect(cursor + col * scale, y + row * scale, scale, scale, c);
          }
        }
      }
      cursor += (GLYPH_WIDTH + 1) * scale;
    }
  }
}
