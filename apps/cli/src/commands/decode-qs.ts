import { randomUUID } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
// The subpath without the record schema: decoding never validates, and TypeBox takes 0.1 s to load.
import { type DecodedRecord, toTraceRecord } from '@tracehub/contracts/decoded-record';
import { QsDecoder, type QsDecoderOptions, QsDecoderRecordId, QsRecordId } from '@tracehub/qs';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { CommandOutput, openInput } from '../command-io.js';

/** The size overrides of `tracehub decode --protocol qs`, QSPY's -O -F -T -S -E -Q -P -B -C (spec 4.3). */
const SIZE_OPTIONS: { flag: string; key: keyof QsDecoderOptions; qspy: string; what: string }[] = [
  { flag: 'obj-ptr-size', key: 'objPtrSize', qspy: '-O', what: 'object pointer size' },
  { flag: 'fun-ptr-size', key: 'funPtrSize', qspy: '-F', what: 'function pointer size' },
  { flag: 'time-size', key: 'timeSize', qspy: '-T', what: 'timestamp size' },
  { flag: 'sig-size', key: 'sigSize', qspy: '-S', what: 'signal size' },
  { flag: 'event-size', key: 'eventSize', qspy: '-E', what: 'event-size field size' },
  { flag: 'queue-ctr-size', key: 'queueCtrSize', qspy: '-Q', what: 'event-queue counter size' },
  { flag: 'pool-ctr-size', key: 'poolCtrSize', qspy: '-P', what: 'memory-pool counter size' },
  { flag: 'pool-blk-size', key: 'poolBlkSize', qspy: '-B', what: 'memory-pool block-size size' },
  { flag: 'te-ctr-size', key: 'teCtrSize', qspy: '-C', what: 'time-event counter size' },
];

function parseSize(value: string): number {
  const n = Number(value);
  if (n !== 1 && n !== 2 && n !== 4 && n !== 8) throw new InvalidArgumentError('must be 1, 2, 4 or 8 (bytes)');
  return n;
}

/** `7.4`, `7.4.0` or `740` -> 740 (QSPY's -v takes the dotted form). */
function parseVersion(value: string): number {
  const parts = value.split('.');
  if (/^\d+$/.test(value) && parts.length === 1) return Number(value);
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => !/^\d+$/.test(p))) {
    throw new InvalidArgumentError('must look like 7.4, 7.4.0 or 740');
  }
  return Number(parts[0]) * 100 + Number(parts[1]) * 10 + Number(parts[2] ?? 0);
}

/** Adds the qs-specific options of `tracehub decode`. */
export function addQsDecodeOptions(cmd: Command): void {
  for (const o of SIZE_OPTIONS) {
    cmd.addOption(
      new Option(`--${o.flag} <bytes>`, `qs: ${o.what} until the target info arrives (qspy ${o.qspy})`).argParser(
        parseSize,
      ),
    );
  }
  cmd.addOption(
    new Option(
      '--qs-version <version>',
      'qs: QS version until the target info arrives, e.g. 7.4 (qspy -v; default 7.0)',
    ).argParser(parseVersion),
  );
}

/** Where the command reads and writes; the process's own streams unless a test gives others. */
export interface QsDecodeIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable & { isTTY?: boolean };
}

/** Decodes FILE (or `-` for stdin) as qs and writes the records to stdout, a summary to stderr. */
export async function runQsDecode(file: string, opts: Record<string, unknown>, io?: QsDecodeIo): Promise<void> {
  const { stdin, stdout, stderr } = io ?? { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
  const format = String(opts.format ?? 'text');
  if (format !== 'text' && format !== 'json') throw new Error(`unknown qs format '${format}': use text or json`);

  const options: QsDecoderOptions = {};
  for (const o of SIZE_OPTIONS) {
    const camel = o.flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (opts[camel] !== undefined) (options as Record<string, number>)[o.key] = Number(opts[camel]);
  }
  if (opts.qsVersion !== undefined) options.version = Number(opts.qsVersion);
  const decoder = new QsDecoder(options);

  const { input, progress } = openInput(file, stdin, stderr);

  const session = `offline-${randomUUID()}`;
  let seq = 0;
  let chunkIndex = 0;
  let hostNs = 0n;
  // Lines go straight into output blocks, so that no record outlives the call that decoded it.
  // Only the process's own stdout (a file, pipe or terminal) is done with a block when its write
  // calls back; a stream in the process (a test's PassThrough) may still hold it.
  const output = new OutputBlocks(format === 'text' ? 'latin1' : 'utf8', stdout === process.stdout);
  const seen = { lengthErrors: 0, targetInfos: 0 };
  const notice = (r: DecodedRecord) => {
    if (r.type === QsDecoderRecordId.QS_RECORD_LENGTH) seen.lengthErrors++;
    else if (r.type === QsRecordId.QS_TARGET_INFO) seen.targetInfos++;
  };
  const collect =
    format === 'text'
      ? (r: DecodedRecord) => {
          if (r.kind !== 'record') notice(r);
          if (r.text !== '') output.line(r.text);
        }
      : (r: DecodedRecord) => {
          if (r.kind !== 'record') notice(r);
          const record = toTraceRecord(r, {
            rig: 'offline',
            link: 'file',
            session,
            seq: seq++,
            chunk: chunkIndex,
            protocol: 'qs',
            hostNs,
          });
          output.line(JSON.stringify(record));
        };
  const out = new CommandOutput(stdout);
  const flush = async () => {
    for (const block of output.take()) await out.write(block, () => output.recycle(block));
  };

  let read = 0;
  for await (const chunk of input) {
    hostNs = BigInt(Date.now()) * 1_000_000n;
    decoder.push(chunk, { hostNs }, collect);
    read += chunk.length;
    progress?.update(read);
    await flush();
    chunkIndex++;
    if (out.readerGone) {
      input.destroy();
      break;
    }
  }
  hostNs = BigInt(Date.now()) * 1_000_000n;
  decoder.end({ hostNs }, collect);
  await flush();
  progress?.done();
  out.close();

  const s = decoder.stats();
  stderr.write(
    `qs: ${s.bytes} bytes, ${s.frames} frames, ${s.records} records, ${s.errors} errors, ${s.gaps} gaps` +
      ` (${s.lostFrames} frames lost), ${s.bytesSkipped} bytes skipped\n`,
  );
  const verdict = qsDecodeVerdict({
    bytes: s.bytes,
    frames: s.frames,
    bytesSkipped: s.bytesSkipped,
    ...seen,
  });
  if (verdict.warning) stderr.write(`qs: warning: ${verdict.warning}\n`);
  if (verdict.failure) throw new Error(verdict.failure);
}

/**
 * What `tracehub decode --protocol qs` says when a stream gave little or nothing: a failure
 * (the command exits non-zero) when no frame at all decoded, a warning naming the likely fix
 * when most of it was bad or did not fit the sizes in use.
 */
export function qsDecodeVerdict(s: {
  bytes: number;
  frames: number;
  bytesSkipped: number;
  lengthErrors: number;
  targetInfos: number;
}): { warning?: string; failure?: string } {
  if (s.bytes === 0) return { failure: 'nothing decoded: the input is empty' };
  const good = s.frames - s.lengthErrors;
  if (s.frames === 0 || good <= 0) {
    return {
      failure:
        s.frames === 0
          ? `nothing decoded: no QS frame in ${s.bytes} bytes had a good checksum. ` +
            'Is it a QS capture? STP or SWD captures decode with --protocol stp or --protocol swd.'
          : `nothing decoded: every one of the ${s.frames} frames failed its layout. ` +
            "The target's sizes differ from the ones in use: give them (--obj-ptr-size, --fun-ptr-size, " +
            '--time-size, --sig-size, ...), or capture from the target reset so that its target info comes first.',
    };
  }
  if (s.bytesSkipped * 2 > s.bytes) {
    return {
      warning:
        `${s.bytesSkipped} of ${s.bytes} bytes were not good frames. ` +
        'Is it a QS capture (STP or SWD: --protocol stp or swd), and was the link read at the right speed?',
    };
  }
  if (s.targetInfos === 0 && s.lengthErrors * 10 > s.frames) {
    return {
      warning:
        `${s.lengthErrors} of ${s.frames} records did not fit their layout and no target info came. ` +
        "Give the target's sizes (--obj-ptr-size 8 --fun-ptr-size 8 for a 64-bit target, --time-size, " +
        '--sig-size, ...), or capture from the target reset.',
    };
  }
  return {};
}

/**
 * Output bytes in blocks of 256 KiB (text as Latin-1, so that every target byte comes out as
 * qspy wrote it; JSON as UTF-8). Lines are joined a few hundred at a time and each batch is
 * encoded into the current block in one go: encoding costs a call into the runtime, which
 * once per line cost more than decoding the record. A batch is short enough that its lines
 * die young, as the records they come from do. A block the output stream is done with is filled
 * again: a fresh 256 KiB buffer costs its page faults every time.
 */
class OutputBlocks {
  private static readonly SIZE = 256 * 1024;
  private static readonly BATCH = 256;
  private block: Buffer = Buffer.allocUnsafe(OutputBlocks.SIZE);
  private pos = 0;
  private full: Buffer[] = [];
  /** Blocks written out, to be filled again. */
  private free: Buffer[] = [];
  /** Lines not encoded yet, with an empty last one so that the batch joins with a final newline. */
  private lines: string[] = [];

  constructor(
    private readonly encoding: 'latin1' | 'utf8',
    private readonly reuse: boolean,
  ) {}

  line(s: string): void {
    this.lines.push(s);
    if (this.lines.length === OutputBlocks.BATCH) this.encodeLines();
  }

  /** The blocks filled so far (the current one included), to be written in order. */
  take(): Buffer[] {
    this.encodeLines();
    this.cut();
    const blocks = this.full;
    this.full = [];
    return blocks;
  }

  /** Gives back a block from `take()` once the output stream is done with it. */
  recycle(block: Buffer): void {
    // A block of SIZE owns its ArrayBuffer (Node pools only small buffers).
    if (this.reuse && block.buffer.byteLength === OutputBlocks.SIZE && this.free.length < 8) {
      this.free.push(Buffer.from(block.buffer, 0, OutputBlocks.SIZE));
    }
  }

  private encodeLines(): void {
    if (this.lines.length === 0) return;
    this.lines.push('');
    const text = this.lines.join('\n');
    this.lines = [];
    // Latin-1 is one byte per character; UTF-8 at most three per UTF-16 unit.
    const max = this.encoding === 'latin1' ? text.length : text.length * 3;
    if (this.pos + max > this.block.length) {
      this.cut();
      if (max > this.block.length) this.block = Buffer.allocUnsafe(max);
    }
    this.pos += this.block.write(text, this.pos, this.encoding);
  }

  private cut(): void {
    if (this.pos === 0) return;
    this.full.push(this.block.subarray(0, this.pos));
    this.block = this.free.pop() ?? Buffer.allocUnsafe(OutputBlocks.SIZE);
    this.pos = 0;
  }
}
