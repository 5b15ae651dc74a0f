import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import type { Protocol } from '@tracehub/contracts';
// The subpath without the record schema: decoding never validates, and TypeBox takes 0.1 s to load.
import { type DecodedRecord, toTraceRecord } from '@tracehub/contracts/decoded-record';
import {
  type CapturePause,
  optionsFromCaptureConfig,
  packetJson,
  type StpCaptureConfig,
  StpDecoder,
  type StpDecoderOptions,
  SwdDecoder,
} from '@tracehub/stp';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { CommandOutput, openInput } from '../command-io.js';

const STP_FORMATS = ['text', 'json', 'packets', 'events', 'ost-bin', 'phonet-bin'] as const;
type StpFormat = (typeof STP_FORMATS)[number];

const NS_PER_MS = 1_000_000;

function parseStpVersion(value: string): 1 | 2 {
  if (value !== '1' && value !== '2') throw new InvalidArgumentError('must be 1 or 2');
  return Number(value) as 1 | 2;
}

/** `0x41,17,0x30` -> [65, 17, 48]. */
function parseMasters(value: string): number[] {
  const masters = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => Number(s));
  if (masters.some((m) => !Number.isInteger(m) || m < 0 || m > 0xffff)) {
    throw new InvalidArgumentError('must be a comma-separated list of masters 0..65535 (decimal or 0x hex)');
  }
  return masters;
}

/** Adds the stp-specific options of `tracehub decode`. */
export function addStpDecodeOptions(cmd: Command): void {
  cmd
    .addOption(
      new Option('--stp-version <version>', 'stp: STP version of the stream, 1 or 2 (default 2)').argParser(
        parseStpVersion,
      ),
    )
    .addOption(
      new Option(
        '--little-endian-masters <list>',
        'stp: comma-separated little-endian masters (e.g. 0x21,48)',
      ).argParser(parseMasters),
    )
    .addOption(
      new Option('--output <protocol>', "stp/swd: output protocol whose rules apply (default 'ost')").choices([
        'ost',
        'phonet',
      ]),
    )
    .option(
      '--stp-config <file>',
      'stp: JSON capture config (protocol, little_endian_masters, start, max_pause_ms, resync_pause_ms, pauses [{at_byte, ms}], end_of_stream_pause_ms)',
    );
}

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

  // Output waiting to be written: a string for the text formats, messages for the binary ones.
  let pendingText = '';
  let binary: Uint8Array[] = [];
  let binaryBytes = 0;
  const session = `offline-${randomUUID()}`;
  const offline = { rig: 'offline', link: 'file', session, protocol };
  let seq = 0;
  let chunkIndex = 0;
  let hostNs = 0n;

  const collect = (r: DecodedRecord): void => {
    if (format === 'text') pendingText += `${r.text}\n`;
    else if (format === 'json') {
      const record = toTraceRecord(r, { ...offline, seq: seq++, chunk: chunkIndex, hostNs });
      pendingText += `${JSON.stringify(record)}\n`;
    } else if (format === 'ost-bin' || format === 'phonet-bin') {
      if (r.raw.length > 0) {
        binary.push(r.raw);
        binaryBytes += r.raw.length;
      }
    }
  };

  let decoder: StpDecoder | SwdDecoder;
  if (protocol === 'swd') {
    decoder = new SwdDecoder({ output });
  } else {
    const options: StpDecoderOptions = { ...optionsFromCaptureConfig(config), output };
    if (opts.stpVersion !== undefined) options.version = opts.stpVersion as 1 | 2;
    else if (config.protocol === undefined) options.version = 2;
    if (opts.littleEndianMasters !== undefined) options.littleEndianMasters = opts.littleEndianMasters as number[];
    // The listings need no records: the decoder only parses and reassembles for them.
    if (format === 'packets' || format === 'events') options.records = false;
    if (format === 'packets') {
      options.onPacket = (p) => {
        pendingText += `${packetJson(p)}\n`;
      };
    }
    if (format === 'events') {
      options.onEventJson = (line) => {
        pendingText += `${line}\n`;
      };
    }
    decoder = new StpDecoder(options);
  }

  const out = new CommandOutput(stdout);
  const flush = async () => {
    if (pendingText !== '') {
      const data = pendingText;
      pendingText = '';
      await out.write(data);
    } else if (binary.length > 0) {
      const data = Buffer.concat(binary);
      binary = [];
      binaryBytes = 0;
      await out.write(data);
    }
  };

  const { input, progress } = openInput(file, stdin, stderr);

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
  // Input is decoded a slice at a time and output written once 64 KiB is waiting, so
  // memory stays flat whatever the input size (a megabyte of STP can list 30 MB of packets).
  reading: for await (const chunk of input) {
    for (let at = 0; at < chunk.length; at += DECODE_SLICE) {
      feed(chunk.subarray(at, Math.min(chunk.length, at + DECODE_SLICE)));
      if (pendingText.length >= OUTPUT_BATCH || binaryBytes >= OUTPUT_BATCH) await flush();
      if (out.readerGone) {
        input.destroy();
        break reading;
      }
    }
    progress?.update(offset);
    await flush();
  }
  // A pause at the very end of the file is the closing pause.
  for (; nextPause < pauses.length; nextPause++) {
    if (pauses[nextPause].at_byte === offset) hostNs += BigInt(Math.round(pauses[nextPause].ms * NS_PER_MS));
  }
  decoder.end({ hostNs }, collect);
  await flush();
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
  const warning = uselessStreamWarning(file, decoder, head.subarray(0, headLength));
  if (warning === null) return 0;
  stderr.write(`tracehub: warning: ${warning}\n`);
  return nothingDecoded(decoder) && offset > 0 ? NOTHING_DECODED_EXIT : 0;
}

/** Bytes decoded between checks of the waiting output. */
const DECODE_SLICE = 64 << 10;
/** Output written once this much (characters or bytes) is waiting: below V8's large-object size, so batches die young. */
const OUTPUT_BATCH = 64 << 10;
/** How much of a stream's start is kept to guess what it is. */
const HEAD_BYTES = 4096;
/** Exit status of `decode` when a non-empty input gave no message, exception or marker at all. */
export const NOTHING_DECODED_EXIT = 2;

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
  if (head.length === 0) return null;
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
