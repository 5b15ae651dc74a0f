import { createHash } from 'node:crypto';
import { type PalmTraceEvent, PalmTraceParser, type PalmTraceParserOptions } from '../src/index.js';

/** Bytes from spec-style hex ("01 00 00 …"). */
export function hex(text: string): Uint8Array {
  return Uint8Array.from(text.trim().split(/\s+/), (byte) => Number.parseInt(byte, 16));
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Small seeded PRNG (mulberry32), so every failure can be replayed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Feeds `stream` cut at the given sizes (the last piece takes the rest), then ends it. */
export function parseInChunks(
  stream: Uint8Array,
  nextSize: () => number,
  options?: PalmTraceParserOptions,
): PalmTraceEvent[] {
  const parser = new PalmTraceParser(options);
  const events: PalmTraceEvent[] = [];
  const emit = (event: PalmTraceEvent) => events.push(event);
  for (let at = 0; at < stream.length; ) {
    const size = Math.max(1, nextSize());
    // A copy, so the parser cannot lean on the caller's buffer staying unchanged.
    const chunk = stream.slice(at, at + size);
    parser.push(chunk, emit);
    chunk.fill(0xee);
    at += size;
  }
  parser.end(emit);
  return events;
}

/**
 * Events with every byte array replaced by its length and SHA-1: deep equality of long typed
 * arrays element by element is slow, and this compares the same thing.
 */
export function digestEvents(events: PalmTraceEvent[]): unknown {
  const digest = (value: unknown): unknown => {
    if (value instanceof Uint8Array) return `${value.length}:${createHash('sha1').update(value).digest('hex')}`;
    if (Array.isArray(value)) return value.map(digest);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, digest(inner)]));
    }
    return value;
  };
  return digest(events);
}
