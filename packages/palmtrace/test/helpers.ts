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

/** Feeds `chunks` to a parser (with `options`) one after another, then ends it; returns every event. */
export function parseChunks(chunks: Iterable<Uint8Array>, options?: PalmTraceParserOptions): PalmTraceEvent[] {
  const parser = new PalmTraceParser(options);
  const events: PalmTraceEvent[] = [];
  const emit = (event: PalmTraceEvent) => events.push(event);
  for (const chunk of chunks) parser.push(chunk, emit);
  parser.end(emit);
  return events;
}

/**
 * `stream` cut at the given sizes (the last piece takes the rest). Each piece is a copy, wiped
 * once the parser has taken it, so the parser cannot lean on the caller's buffer staying unchanged.
 */
function* piecesOf(stream: Uint8Array, nextSize: () => number): Generator<Uint8Array> {
  for (let at = 0; at < stream.length; ) {
    const size = Math.max(1, nextSize());
    const chunk = stream.slice(at, at + size);
    yield chunk;
    chunk.fill(0xee);
    at += size;
  }
}

/** Feeds `stream` cut at the given sizes (the last piece takes the rest), then ends it. */
export function parseInChunks(
  stream: Uint8Array,
  nextSize: () => number,
  options?: PalmTraceParserOptions,
): PalmTraceEvent[] {
  return parseChunks(piecesOf(stream, nextSize), options);
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
