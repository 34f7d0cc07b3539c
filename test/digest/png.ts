import { crc32, inflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export interface PngInfo {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
  chunks: string[];
  /** Length of the inflated image data: height × (1 + width × bytes per pixel) for a valid image. */
  rawLength: number;
}

/**
 * Reads a PNG the way a decoder does: signature, every chunk's length and CRC, IHDR first, IEND last,
 * and the image data inflated to exactly the size IHDR promises. Throws on anything else.
 */
export function decodePng(buf: Buffer): PngInfo {
  if (buf.length < 8 || !buf.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG: bad signature');
  const chunks: string[] = [];
  const idat: Buffer[] = [];
  let ihdr: Buffer | undefined;
  let offset = 8;
  while (offset < buf.length) {
    if (offset + 12 > buf.length) throw new Error(`truncated chunk at ${offset}`);
    const length = buf.readUInt32BE(offset);
    const type = buf.toString('latin1', offset + 4, offset + 8);
    const data = buf.subarray(offset + 8, offset + 8 + length);
    const crc = buf.readUInt32BE(offset + 8 + length);
    if (crc32(buf.subarray(offset + 4, offset + 8 + length)) !== crc) throw new Error(`bad CRC in ${type} chunk`);
    chunks.push(type);
    if (type === 'IHDR') ihdr = Buffer.from(data);
    if (type === 'IDAT') idat.push(Buffer.from(data));
    offset += 12 + length;
  }
  if (chunks[0] !== 'IHDR' || !ihdr || ihdr.length !== 13) throw new Error('IHDR is not the first chunk');
  if (chunks[chunks.length - 1] !== 'IEND') throw new Error('IEND is not the last chunk');
  const width = ihdr.readUInt32BE(0);
  const height = ihdr.readUInt32BE(4);
  const bitDepth = ihdr[8]!;
  const colorType = ihdr[9]!;
  const rawLength = inflateSync(Buffer.concat(idat)).length;
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colorType as 0 | 2 | 3 | 4 | 6];
  if (!channels) throw new Error(`unknown colour type ${colorType}`);
  const expected = height * (1 + Math.ceil((width * channels * bitDepth) / 8));
  if (rawLength !== expected) throw new Error(`image data is ${rawLength} bytes, IHDR promises ${expected}`);
  return { width, height, bitDepth, colorType, chunks, rawLength };
}

/**
 * The pixels of an 8-bit PNG (grey, RGB or RGBA), as RGBA, undoing each row's filter as a decoder
 * does (PNG spec §9: None, Sub, Up, Average, Paeth). Enough to ask what colour a chart's ground is
 * and whether any pixel is transparent.
 */
export function decodePngPixels(buf: Buffer): { width: number; height: number; rgba: Buffer } {
  const info = decodePng(buf);
  if (info.bitDepth !== 8 || ![0, 2, 6].includes(info.colorType)) throw new Error(`unsupported PNG: depth ${info.bitDepth}, colour type ${info.colorType}`);
  let offset = 8;
  const idat: Buffer[] = [];
  while (offset < buf.length) {
    const length = buf.readUInt32BE(offset);
    if (buf.toString('latin1', offset + 4, offset + 8) === 'IDAT') idat.push(buf.subarray(offset + 8, offset + 8 + length));
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const bpp = { 0: 1, 2: 3, 6: 4 }[info.colorType as 0 | 2 | 6];
  const stride = info.width * bpp;
  const out = Buffer.alloc(info.height * stride);
  for (let y = 0; y < info.height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? out[y * stride + x - bpp]! : 0;
      const b = y > 0 ? out[(y - 1) * stride + x]! : 0;
      const c = x >= bpp && y > 0 ? out[(y - 1) * stride + x - bpp]! : 0;
      const p = a + b - c;
      const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
      const predictor = [0, a, b, (a + b) >> 1, paeth][filter];
      if (predictor === undefined) throw new Error(`bad filter ${filter} on row ${y}`);
      out[y * stride + x] = (line[x]! + predictor) & 0xff;
    }
  }
  const rgba = Buffer.alloc(info.width * info.height * 4);
  for (let i = 0; i < info.width * info.height; i++) {
    if (bpp === 4) out.copy(rgba, i * 4, i * 4, i * 4 + 4);
    else if (bpp === 3) rgba.set([out[i * 3]!, out[i * 3 + 1]!, out[i * 3 + 2]!, 255], i * 4);
    else rgba.set([out[i]!, out[i]!, out[i]!, 255], i * 4);
  }
  return { width: info.width, height: info.height, rgba };
}
