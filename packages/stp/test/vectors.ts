import { readdirSync, readFileSync } from 'node:fs';
import type { DecodedRecord } from '@tracehub/contracts';
import {
  type CapturePause,
  capturePieces,
  optionsFromCaptureConfig,
  type PacketEntry,
  packetEntry,
  type StpCaptureConfig,
  StpDecoder,
  type StpDecoderOptions,
  type StpEvent,
} from '@tracehub/stp';
import { fixturePath } from '@tracehub/tests/support';

/** One reference vector of shared/fixtures/stp. */
export interface Vector {
  name: string;
  bytes: Uint8Array;
  expected: {
    config: StpCaptureConfig & { pauses?: CapturePause[] };
    packets: PacketEntry[];
    ost: StpEvent[];
    phonet: StpEvent[];
    open_at_end: { master: number; channel: number; len: number }[];
  };
}

export function loadVectors(): Vector[] {
  const dir = fixturePath('stp');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.expected.json'))
    .sort()
    .map((f) => {
      const name = f.replace('.expected.json', '');
      return {
        name,
        bytes: new Uint8Array(readFileSync(`${dir}/${name}.stp`)),
        expected: JSON.parse(readFileSync(`${dir}/${f}`, 'utf8')),
      };
    });
}

export interface DecodeRun {
  events: StpEvent[];
  packets: PacketEntry[];
  records: DecodedRecord[];
}

/** Decodes a vector with its config, cutting chunks with `chunkSize`; optionally snapshots and restores before every chunk. */
export function decodeVector(
  v: Vector,
  output: 'ost' | 'phonet',
  chunkSize: number | ((offset: number) => number) = 4096,
  opts: { restoreEveryChunk?: boolean; packets?: boolean; extra?: StpDecoderOptions } = {},
): DecodeRun {
  const run: DecodeRun = { events: [], packets: [], records: [] };
  const callbacks: StpDecoderOptions = { onEvent: (e) => run.events.push(e) };
  if (opts.packets !== false) callbacks.onPacket = (p) => run.packets.push(packetEntry(p));
  const options = { ...optionsFromCaptureConfig(v.expected.config), output, ...opts.extra, ...callbacks };
  let decoder = new StpDecoder(options);
  const emit = (r: DecodedRecord) => run.records.push(r);
  let lastNs = 0n;
  for (const piece of capturePieces(v.bytes.length, v.expected.config.pauses ?? [], chunkSize)) {
    if (opts.restoreEveryChunk) {
      decoder = StpDecoder.restore(JSON.parse(JSON.stringify(decoder.snapshot())), callbacks);
    }
    decoder.push(v.bytes.subarray(piece.start, piece.end), { hostNs: piece.hostNs }, emit);
    lastNs = piece.hostNs;
  }
  decoder.end({ hostNs: lastNs }, emit);
  return run;
}

export function withoutAtNibble(events: StpEvent[]): StpEvent[] {
  return events.map((e) => {
    const { at_nibble: _, ...rest } = e;
    return rest;
  });
}
