import { readFileSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import type { Protocol } from '@tracehub/contracts';
// The subpath without the record schema: decoding never validates, and TypeBox takes 0.1 s to load.
import { type DecodedRecord, toTraceRecord } from '@tracehub/contracts/decoded-record';
import {
  type CapturePause,
  OutputBuffer,
  optionsFromCaptureConfig,
  type StpCaptureConfig,
  StpDecoder,
  type StpDecoderOptions,
  SwdDecoder,
  writePacketJson,
} from '@tracehub/stp';
import { CommandOutput, offlineSessionId, openInputChunks } from '../command-io.js';
import { tierUpLater } from '../v8-tiering.js';
import { EMPTY_INPUT, reportVerdict } from './decode-verdict.js';

const STP_FORMATS = ['text', 'json', 'packets', 'events', 'ost-bin', 'phonet-bin'] as const;
type StpFormat = (typeof STP_FORMATS)[number];

const NS_PER_MS = 1_000_000;

/** Where the command reads and writes; the process's own streams unless a test gives others. */
export interface StpDecodeIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable & { isTTY?: boolean };
}

/** Reads `--stp-config`: a config object, or a whole reference vector whose `config` it takes. */
function readCaptureConfig(path: string): StpCaptureConfig {
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  const config = (
    parsed.config !== null && typeof parsed.config === 'object' ? parsed.config : parsed
  ) as StpCaptureConfig;
  if (config.pauses !== undefined && !Array.isArray(config.pauses)) throw new Error(`${path}: 'pauses' must be a list`);
  for (const p of config.pauses ?? []) {
    if (!Number.isInteger(p.at_byte) || p.at_byte < 0 || typeof p.ms !== 'number' || p.ms < 0) {
      throw new Error(`${path}: each pause needs an integer 'at_byte' >= 0 and 'ms' >= 0`);
    }
  }
  return config;
}

/**
 * Decodes FILE (or `-` for stdin) as stp (or swd when `opts.protocol` is 'swd') and writes
 * the chosen format to stdout, a summary to stderr. Pauses of `--stp-config` cut the input at
 * their byte offsets and advance a synthetic receive clock, as a live link's receive times do.
 */
export async function runStpDecode(file: string, opts: Record<string, unknown>, io?: StpDecodeIo): Promise<number> {
  const { stdin, stdout, stderr } = io ?? { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
  tierUpLater();
  const protocol: Protocol = opts.protocol === 'swd' ? 'swd' : 'stp';
  const format = String(opts.format ?? 'text') as StpFormat;
  if (!STP_FORMATS.includes(format)) {
    throw new Error(`unknown ${protocol} format '${format}': use ${STP_FORMATS.join(', ')}`);
  }
  if (protocol === 'swd' && (format === 'packets' || format === 'events')) {
    throw new Error(`format '${format}' is for stp streams; swd gives text, json, ost-bin or phonet-bin`);
  }
  // The binary formats are the messages of one output protocol, so they choose it.
  const output =
    format === 'ost-bin' ? 'ost' : format === 'phonet-bin' ? 'phonet' : ((opts.output as 'ost' | 'phonet') ?? 'ost');

  const config: StpCaptureConfig = opts.stpConfig !== undefined ? readCaptureConfig(String(opts.stpConfig)) : {};
  const pauses: CapturePause[] = [...(config.pauses ?? [])].sort((a, b) => a.at_byte - b.at_byte);

  // Every format is written straight into 256 KiB blocks, handed out as they fill and written
  // after each slice of input: no string per line, and memory stays the same whatever the size.
  const ready: Uint8Array[] = [];
  const blocks = new OutputBuffer((block) => ready.push(block));
  // Only the process's own stdout is done with a block when its write calls back; a stream in
  // the process (a test's PassThrough) may still hold it.
  const reuseBlocks = stdout === process.stdout;
  const session = format === 'json' ? await offlineSessionId() : '';
  const offline = { rig: 'offline', link: 'file', session, protocol };
  let seq = 0;
  let chunkIndex = 0;
  let hostNs = 0n;

  const collect = (r: DecodedRecord): void => {
    if (format === 'text') {
      blocks.text(r.text);
      blocks.newline();
    } else if (format === 'json') {
      blocks.text(JSON.stringify(toTraceRecord(r, { ...offline, seq: seq++, chunk: chunkIndex, hostNs })));
      blocks.newline();
    } else if (format === 'ost-bin' || format === 'phonet-bin') {
      blocks.raw(r.raw);
    }
  };

  let decoder: StpDecoder | SwdDecoder;
  if (protocol === 'swd') {
    decoder = new SwdDecoder({
      output,
      port: opts.port as number | undefined,
      processor: opts.processor as number | undefined,
    });
  } else {
    const options: StpDecoderOptions = { ...optionsFromCaptureConfig(config), output };
    if (opts.stpVersion !== undefined) options.version = opts.stpVersion as 1 | 2;
    else if (config.protocol === undefined) options.version = 2;
    if (opts.littleEndianMasters !== undefined) options.littleEndianMasters = opts.littleEndianMasters as number[];
    if (opts.port !== undefined) options.port = opts.port as number;
    // The listings need no records: the decoder only parses and reassembles for them.
    if (format === 'packets' || format === 'events') options.records = false;
    if (format === 'packets') {
      options.onPacket = (p) => {
        writePacketJson(blocks, p);
        blocks.newline();
      };
    }
    if (format === 'events') options.eventLines = blocks;
    decoder = new StpDecoder(options);
  }

  const out = new CommandOutput(stdout);
  /** Writes the full blocks, and with `all` what is in the current one too. */
  const flush = async (all: boolean) => {
    if (all) blocks.flush();
    for (const block of ready.splice(0)) await out.write(block, reuseBlocks ? () => blocks.recycle(block) : undefined);
  };

  const { input, progress } = openInputChunks(file, stdin, stderr, READ_BYTES);

  let offset = 0;
  let nextPause = 0;
  // The first bytes, kept to guess what a stream that decodes to nothing really is.
  const head = new Uint8Array(HEAD_BYTES);
  let headLength = 0;
  const feed = (bytes: Uint8Array) => {
    if (headLength < HEAD_BYTES) {
      const take = Math.min(HEAD_BYTES - headLength, bytes.length);
      head.set(bytes.subarray(0, take), headLength);
      headLength += take;
    }
    let start = 0;
    while (start < bytes.length) {
      while (nextPause < pauses.length && pauses[nextPause].at_byte <= offset) {
        if (pauses[nextPause].at_byte === offset) hostNs += BigInt(Math.round(pauses[nextPause].ms * NS_PER_MS));
        nextPause++;
      }
      let end = bytes.length;
      if (nextPause < pauses.length) end = Math.min(end, start + (pauses[nextPause].at_byte - offset));
      decoder.push(bytes.subarray(start, end), { hostNs }, collect);
      offset += end - start;
      start = end;
      chunkIndex++;
    }
  };

  // A pause before the first byte needs a receive time before it: an empty first chunk.
  if (pauses.length > 0 && pauses[0].at_byte === 0) decoder.push(new Uint8Array(0), { hostNs }, collect);
  // Input is decoded a slice at a time and the blocks it filled written before the next, so
  // memory stays flat whatever the input size (a megabyte of STP can list 30 MB of packets).
  reading: for await (const chunk of input) {
    for (let at = 0; at < chunk.length; at += DECODE_SLICE) {
      feed(chunk.subarray(at, Math.min(chunk.length, at + DECODE_SLICE)));
      await flush(false);
      // Leaving the loop closes the input (a stream is destroyed, a file closed).
      if (out.readerGone) break reading;
    }
    progress?.update(offset);
    await flush(true);
  }
  // A pause at the very end of the file is the closing pause.
  for (; nextPause < pauses.length; nextPause++) {
    if (pauses[nextPause].at_byte === offset) hostNs += BigInt(Math.round(pauses[nextPause].ms * NS_PER_MS));
  }
  decoder.end({ hostNs }, collect);
  await flush(true);
  progress?.done();
  out.close();

  const s = decoder.stats();
  if (decoder instanceof StpDecoder) {
    stderr.write(
      `stp: ${offset} bytes, ${s.nibbles} nibbles, ${s.messages} messages, ${s.exceptions} exceptions, ` +
        `${s.markers} markers, ${s.discardedMessages} messages discarded, ${s.discardedNibbles} nibbles skipped, ` +
        `${s.openAtEnd} open at end, ${s.records} records\n`,
    );
  } else {
    stderr.write(
      `swd: ${offset} bytes, ${s.messages} messages, ${s.violations} framing violations, ` +
        `${s.skippedBytes} bytes skipped, ${s.emptyFrames} empty frames\n`,
    );
  }
  if (offset === 0) return reportVerdict(stderr, { failure: EMPTY_INPUT });
  const warning = uselessStreamWarning(file, decoder, head.subarray(0, headLength));
  if (warning === null) return 0;
  return reportVerdict(stderr, nothingDecoded(decoder) ? { failure: warning } : { warning });
}

/**
 * A file is read this much at a time. Each read is a turn of the event loop, in which the output
 * blocks written meanwhile come back for reuse: a read's worth of output is what is in flight.
 */
const READ_BYTES = 64 << 10;

/** Bytes decoded between checks of the waiting output. */
const DECODE_SLICE = 64 << 10;
/** How much of a stream's start is kept to guess what it is. */
const HEAD_BYTES = 4096;
function nothingDecoded(decoder: StpDecoder | SwdDecoder): boolean {
  const s = decoder.stats();
  return decoder instanceof StpDecoder
    ? s.messages + s.exceptions + s.markers + s.openAtEnd === 0
    : s.messages + s.violations === 0;
}

/** A QS capture is full of 0x7E frame flags; STP and SWD streams seldom are. */
function looksLikeQs(head: Uint8Array): boolean {
  let flags = 0;
  for (const b of head) if (b === 0x7e) flags++;
  return head.length >= 64 && flags * 64 >= head.length;
}

/**
 * Why a stream gave nothing useful, and the option that most likely fixes it; null when the
 * decode looks healthy. "Nothing useful": no message at all, or most of the stream skipped.
 */
function uselessStreamWarning(file: string, decoder: StpDecoder | SwdDecoder, head: Uint8Array): string | null {
  const s = decoder.stats();
  const name = file === '-' ? 'standard input' : file;
  const qs = looksLikeQs(head) ? `; it looks like a QS capture (0x7E frame flags): try --protocol qs` : '';
  if (!(decoder instanceof StpDecoder)) {
    if (s.messages > 0) return null;
    return `no SWD message in ${name} (${s.skippedBytes} bytes outside any 0xC0...0xC1 frame)${
      qs || '; is it an STP stream? try --protocol stp'
    }`;
  }
  const skippedMost = s.discardedNibbles * 2 > s.nibbles;
  if (!nothingDecoded(decoder) && !skippedMost) return null;
  const what = nothingDecoded(decoder) ? 'nothing decoded' : 'most of the stream skipped';
  const skipped = `${s.discardedNibbles} of ${s.nibbles} nibbles skipped`;
  if (decoder.parser.version === 1) {
    const beforeMaster = s.dataWithoutMaster > 0 ? `, ${s.dataWithoutMaster} data packets before any MASTER` : '';
    return (
      `${what} from ${name} as STP v1 (${skipped}${beforeMaster}): if it is STP v2 (ASYNC + VERSION), ` +
      `drop --stp-version 1; if it was captured hot-plugged or with pauses, give its capture config with --stp-config${qs}`
    );
  }
  return (
    `${what} from ${name} as STP v2 (${skipped}: no ASYNC + VERSION or 22 NULLs + VERSION found): ` +
    `if it is STP v1, decode it with --stp-version 1 or --stp-config CONFIG.json (the capture's config)${qs}`
  );
}
