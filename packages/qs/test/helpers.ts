import { readdirSync, readFileSync } from 'node:fs';
import type { DecodedRecord } from '@tracehub/contracts';
import { QsDecoder, type QsDecoderOptions } from '@tracehub/qs';
import { fixturePath } from '@tracehub/tests/support';

export const FIXTURE_NAMES: string[] = readdirSync(fixturePath('qs'))
  .filter((f) => f.endsWith('.qs'))
  .map((f) => f.slice(0, -3))
  .sort();

export function captureBytes(name: string): Uint8Array {
  return new Uint8Array(readFileSync(fixturePath('qs', `${name}.qs`)));
}

const ctx = { hostNs: 0n };

/** Decodes `bytes` cut into chunks of the given sizes (cycled), then ends the stream. */
export function decodeChunked(bytes: Uint8Array, sizes: number[], options?: QsDecoderOptions): DecodedRecord[] {
  const decoder = new QsDecoder(options);
  const out: DecodedRecord[] = [];
  const emit = (r: DecodedRecord) => out.push(r);
  let off = 0;
  let i = 0;
  while (off < bytes.length) {
    const n = sizes[i++ % sizes.length];
    decoder.push(bytes.subarray(off, off + n), ctx, emit);
    off += n;
  }
  decoder.end(ctx, emit);
  return out;
}

/** The text output: non-empty texts joined, split into lines. */
export function textLines(records: DecodedRecord[]): string[] {
  return records
    .filter((r) => r.text !== '')
    .map((r) => r.text)
    .join('\n')
    .split('\n');
}
