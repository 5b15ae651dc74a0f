import type { DecodedRecord } from '@tracehub/contracts';
import { Pkt, packetJson, StpDecoder, type StpDecoderOptions, type StpEvent, StpStreamWriter } from '@tracehub/stp';
import { seededRandom } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import { loadVectors } from './vectors.js';

const STREAMS = 100_000;
const SMALL_LIMITS = { maxMessageBytes: 300, maxBufferedBytes: 1200, maxOpenBuffers: 6 };

/** A sync that recovers from any state: payloads eat at most 34 nibbles, then >21 F and 0 remain. */
const V2_RECOVERY = new StpStreamWriter()
  .async(64)
  .version(3)
  .packet(Pkt.M16, 0xbeef)
  .packet(Pkt.C16, 0x1234)
  .data(1, 0x5a, 'M')
  .bytes();
const V1_RECOVERY = new StpStreamWriter()
  .packet(Pkt.MASTER, 0x42)
  .packet(Pkt.V1_C8, 0x43)
  .v1Data(1, 0x5a, 0x01)
  .bytes();

const EMPTY = new Uint8Array(0);

function splice(bytes: Uint8Array, at: number, remove: number, insert: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length - remove + insert.length);
  out.set(bytes.subarray(0, at));
  out.set(insert, at);
  out.set(bytes.subarray(at + remove), at + insert.length);
  return out;
}

const seeds = loadVectors()
  .filter((v) => v.bytes.length < 1000)
  .map((v) => v.bytes);

/** Random bytes biased towards the nibbles that steer the parser, or a mutated piece of a vector. */
function randomStream(random: () => number): Uint8Array {
  const byte = () => Math.floor(random() * 256);
  if (random() < 0.5) {
    const stream = new Uint8Array(1 + Math.floor(random() * 40));
    // F runs and NULLs.
    for (let i = 0; i < stream.length; i++) {
      const r = random();
      stream[i] = r < 0.15 ? 0xff : r < 0.25 ? 0x00 : byte();
    }
    return stream;
  }
  const seed = seeds[Math.floor(random() * seeds.length)];
  const from = Math.floor(random() * Math.max(1, seed.length - 128));
  let stream: Uint8Array = seed.slice(from, from + 80);
  const mutations = 1 + Math.floor(random() * 4);
  for (let m = 0; m < mutations; m++) {
    const at = Math.floor(random() * stream.length);
    const kind = random();
    if (kind < 0.5) stream[at] ^= 1 << Math.floor(random() * 8);
    else if (kind < 0.75) stream = splice(stream, at, 1, EMPTY);
    else stream = splice(stream, at, 0, Uint8Array.of(byte()));
  }
  return stream.length > 96 ? stream.subarray(0, 96) : stream;
}

/** Packets and events of a stream fed in these chunks, as one text. */
function listing(version: 1 | 2, chunks: Uint8Array[]): string {
  const lines: string[] = [];
  const decoder = new StpDecoder({
    version,
    onPacket: (p) => lines.push(packetJson(p)),
    onEvent: (e) => lines.push(JSON.stringify(e)),
  });
  for (const chunk of chunks) decoder.push(chunk, { hostNs: 0n }, () => {});
  decoder.end({ hostNs: 0n }, () => {});
  return lines.join('\n');
}

describe('fuzz', () => {
  it(`survives ${STREAMS} random and mutated streams, stays bounded and recovers at the next sync`, () => {
    const random = seededRandom(0x5eed);
    let records = 0;
    let maxOpen = 0;
    const heapBefore = process.memoryUsage().heapUsed;
    for (let n = 0; n < STREAMS; n++) {
      const version: 1 | 2 = random() < 0.5 ? 1 : 2;
      const stream = randomStream(random);
      const options: StpDecoderOptions = {
        version,
        output: random() < 0.5 ? 'ost' : 'phonet',
        littleEndianMasters: random() < 0.3 ? [0x42, 0x10] : [],
        start: version === 1 && random() < 0.3 ? 'hot_plug' : undefined,
      };
      if (random() < 0.3) options.limits = SMALL_LIMITS;
      const events: StpEvent[] = [];
      options.onEvent = (e) => events.push(e);
      const decoder = new StpDecoder(options);
      const emit = (_r: DecodedRecord) => {
        records++;
      };
      // Random chunks and random pauses between them.
      let offset = 0;
      let hostNs = 0n;
      while (offset < stream.length) {
        const size = 1 + Math.floor(random() * 40);
        const r = random();
        hostNs += r < 0.1 ? 200_000_000n : r < 0.2 ? 2_000_000n : 0n;
        decoder.push(stream.subarray(offset, offset + size), { hostNs }, emit);
        offset += size;
      }
      maxOpen = Math.max(maxOpen, decoder.stats().openBuffers);
      // Then a clean sync and one message: it must come out as sent.
      events.length = 0;
      hostNs += 200_000_000n;
      decoder.push(version === 2 ? V2_RECOVERY : V1_RECOVERY, { hostNs }, emit);
      const last = events.at(-1);
      const expected = version === 2 ? { master: 0xbeef, channel: 0x1234 } : { master: 0x42, channel: 0x43 };
      if (
        last?.kind !== 'message' ||
        last.master !== expected.master ||
        last.channel !== expected.channel ||
        last.data !== '5a'
      ) {
        throw new Error(
          `stream ${n} (v${version}) did not recover: ${Buffer.from(stream).toString('hex')} -> ${JSON.stringify(events)}`,
        );
      }
      decoder.end({ hostNs: hostNs + 1n }, emit);
    }
    expect(records).toBeGreaterThan(STREAMS);
    expect(maxOpen).toBeLessThanOrEqual(4096);
    const grown = process.memoryUsage().heapUsed - heapBefore;
    expect(grown).toBeLessThan(256 * 1024 * 1024);
  });

  it('lists the same packets and events for a random or mutated stream whole as byte by byte', () => {
    // Whole, most packets are read in one step; byte by byte, most go nibble by nibble.
    const random = seededRandom(0xc0ffee);
    // Two empty listings are equal too: count the packets and events compared, and the streams
    // whose listing had any, so that a decoder that lists nothing cannot pass.
    let lines = 0;
    let listed = 0;
    const STREAMS_COMPARED = 20_000;
    for (let n = 0; n < STREAMS_COMPARED; n++) {
      const version: 1 | 2 = random() < 0.5 ? 1 : 2;
      const stream = randomStream(random);
      const whole = listing(version, [stream]);
      const byByte = listing(
        version,
        Array.from(stream, (b) => Uint8Array.of(b)),
      );
      if (whole !== byByte) {
        throw new Error(`stream ${n} (v${version}) ${Buffer.from(stream).toString('hex')}:\n${whole}\n!==\n${byByte}`);
      }
      if (whole !== '') {
        listed++;
        lines += whole.split('\n').length;
      }
    }
    expect(listed).toBeGreaterThan(STREAMS_COMPARED / 2);
    expect(lines).toBeGreaterThan(STREAMS_COMPARED);
  });

  it('caps the buffers: a message beyond the limit gives OVERFLOW and the stream resynchronises', () => {
    const w = new StpStreamWriter().async().version(3).m8(1).c8(2);
    for (let i = 0; i < 100; i++) w.data(8, 0x0102030405060708n);
    w.async().version(3).m8(1).c8(2).data(1, 0x77, 'M');
    const events: StpEvent[] = [];
    const decoder = new StpDecoder({ limits: { maxMessageBytes: 256 }, onEvent: (e) => events.push(e) });
    decoder.push(w.bytes(), { hostNs: 0n }, () => {});
    expect(events.map((e) => ({ ...e, at_nibble: undefined }))).toEqual([
      { kind: 'marker', code: 0x26, name: 'TB_ERROR_OVERFLOW', params: '', at_nibble: undefined },
      {
        kind: 'message',
        master: 1,
        channel: 2,
        closed_by: 'M',
        len: 1,
        data: '77',
        at_nibble: undefined,
      },
    ]);
  });
});
