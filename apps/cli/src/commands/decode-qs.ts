import { readFileSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Readable, Writable } from 'node:stream';
// The subpath without the record schema: decoding never validates, and TypeBox takes 0.1 s to load.
import { type DecodedRecord, toTraceRecord } from '@tracehub/contracts/decoded-record';
import {
  parseDictionaryFile,
  QsDecoder,
  type QsDecoderOptions,
  type QsDecoderStats,
  type QsDictionaryFile,
  TextBlocks,
} from '@tracehub/qs';
import { CommandOutput, DirectStdout, offlineSessionId, openInput, openInputChunks } from '../command-io.js';
import type { ProgressBar } from '../progress-bar.js';
import { tierUpLater } from '../v8-tiering.js';
import { SIZE_OPTIONS } from './decode-qs-options.js';
import { type DecodeVerdict, EMPTY_INPUT, reportVerdict } from './decode-verdict.js';
import { noticeQsRecord, type QsTextSeen, qsTextSink } from './qs-text-output.js';

/** Where the command reads and writes; the process's own streams unless a test gives others. */
export interface QsDecodeIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable & { isTTY?: boolean };
}

/** A qspy `.dic` file, parsed; an error names the file and the line qspy would not read. */
function readDictionaryFile(file: string): QsDictionaryFile {
  const text = readFileSync(file, 'latin1');
  try {
    return parseDictionaryFile(text);
  } catch (err) {
    throw new Error(`${file} is not a .dic file qspy would read: ${(err as Error).message}`);
  }
}

/**
 * Decodes FILE (or `-` for stdin) as qs and writes the records to stdout, a summary and the
 * verdict to stderr; returns the exit status (NOTHING_DECODED_EXIT when nothing decoded).
 */
export async function runQsDecode(file: string, opts: Record<string, unknown>, io?: QsDecodeIo): Promise<number> {
  const stdin = io?.stdin ?? process.stdin;
  const stderr = io?.stderr ?? process.stderr;
  tierUpLater();
  const format = String(opts.format ?? 'text');
  if (format !== 'text' && format !== 'json') throw new Error(`unknown qs format '${format}': use text or json`);

  const options: QsDecoderOptions = {};
  for (const o of SIZE_OPTIONS) {
    const camel = o.flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (opts[camel] !== undefined) (options as Record<string, number>)[o.key] = Number(opts[camel]);
  }
  if (opts.qsVersion !== undefined) options.version = Number(opts.qsVersion);
  const dictionaryFile = opts.dictionaries === undefined ? undefined : readDictionaryFile(String(opts.dictionaries));

  // Threads: `--threads`, else one. JSON (whose record numbers run through the whole stream)
  // always decodes in this thread. On two cores a second thread cost about half as much CPU
  // again for the same records, and shortened the wall time only when a core was idle.
  // A dictionary file, too, decodes in this thread (the threads take none).
  const asked = format === 'text' && dictionaryFile === undefined ? ((opts.threads as number | undefined) ?? 1) : 1;
  // Loaded only for threads (start-up counts for a command that runs for a second).
  const threading = asked > 1 ? await import('./decode-qs-threads.js') : undefined;
  const segmentBytes = opts.segmentBytes === undefined ? (threading?.SEGMENT_BYTES ?? 0) : Number(opts.segmentBytes);
  // At most one thread a core; and a small input decodes on as many as it has segments, said.
  const cores = Math.min(asked, availableParallelism());
  const threads = threadsFor(cores, file, segmentBytes);
  if (threads < cores)
    stderr.write(
      `qs: decoding on ${threads} thread${threads === 1 ? '' : 's'}, not ${asked}: the input is too small to share out\n`,
    );
  let decoded: { stats: QsDecoderStats; seen: QsTextSeen };
  let progress: ProgressBar | undefined;
  if (threading && threads > 1) {
    const opened = openInput(file, stdin, stderr);
    progress = opened.progress;
    // The threads' blocks wait for their turn: the process's stdout as a stream, which calls
    // back when done with a block, so that its thread fills it again.
    const out = new CommandOutput(io?.stdout ?? process.stdout);
    const recycle = io === undefined;
    decoded = await threading.decodeQsTextInThreads(
      opened.input,
      options,
      { threads, segmentBytes, recycle },
      out,
      progress,
    );
    out.close();
  } else {
    // In this thread each chunk is decoded (and nothing keeps it) before the next is read, so a
    // file is read into one buffer again and again; the threads keep theirs while segments wait.
    const opened = openInputChunks(file, stdin, stderr);
    progress = opened.progress;
    // The process's own stdout is written directly; process.stdout is not touched (as a stream
    // it would make a pipe non-blocking).
    const output = io === undefined ? new DirectStdout() : new CommandOutput(io.stdout);
    decoded = await decodeInProcess(opened.input, options, dictionaryFile, format, output, progress);
    if (output instanceof CommandOutput) output.close();
  }
  const { stats: s, seen } = decoded;
  progress?.done();

  stderr.write(
    `qs: ${s.bytes} bytes, ${s.frames} frames, ${s.records} records, ${s.errors} errors, ${s.gaps} gaps` +
      ` (${s.lostFrames} frames lost), ${s.bytesSkipped} bytes skipped\n`,
  );
  return reportVerdict(
    stderr,
    qsDecodeVerdict({ bytes: s.bytes, frames: s.frames, bytesSkipped: s.bytesSkipped, ...seen }),
  );
}

/**
 * Decodes the whole input with one decoder, in this thread, writing as it goes: straight to
 * `out` when it is DirectStdout (each block as it fills), else each chunk's blocks to the stream.
 */
async function decodeInProcess(
  input: AsyncIterable<Uint8Array>,
  options: QsDecoderOptions,
  dictionaryFile: QsDictionaryFile | undefined,
  format: 'text' | 'json',
  out: DirectStdout | CommandOutput,
  progress: ProgressBar | undefined,
): Promise<{ stats: QsDecoderStats; seen: QsTextSeen }> {
  const decoder = new QsDecoder(options, dictionaryFile);
  const session = format === 'json' ? await offlineSessionId() : '';
  let seq = 0;
  let chunkIndex = 0;
  let hostNs = 0n;
  // Lines go straight into output blocks, so that no record outlives the call that decoded it.
  // A stream in the process (a test's PassThrough) may still hold a block it called back for:
  // those blocks are not filled again.
  const output = new TextBlocks(
    format === 'text' ? 'latin1' : 'utf8',
    out instanceof DirectStdout ? (bytes) => out.write(bytes) : undefined,
  );
  // Text: the most frequent records' lines are written into the blocks as bytes by the decoder.
  if (format === 'text') decoder.textTo(output);
  const seen: QsTextSeen = { lengthErrors: 0, targetInfos: 0 };
  const collect =
    format === 'text'
      ? qsTextSink(output, seen)
      : (r: DecodedRecord) => {
          if (r.kind !== 'record') noticeQsRecord(r, seen);
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
  const flush = async () => {
    const blocks = output.take();
    if (out instanceof CommandOutput) for (const block of blocks) await out.write(block);
  };

  let read = 0;
  for await (const chunk of input) {
    hostNs = BigInt(Date.now()) * 1_000_000n;
    decoder.push(chunk, { hostNs }, collect);
    read += chunk.length;
    progress?.update(read);
    await flush();
    chunkIndex++;
    // Leaving the loop closes the input.
    if (out.readerGone) break;
  }
  hostNs = BigInt(Date.now()) * 1_000_000n;
  decoder.end({ hostNs }, collect);
  await flush();
  return { stats: decoder.stats() as unknown as QsDecoderStats, seen };
}

/**
 * What `tracehub decode --protocol qs` says when a stream gave little or nothing: a failure
 * (the command exits NOTHING_DECODED_EXIT) when no frame at all decoded, a warning naming the likely fix
 * when most of it was bad or did not fit the sizes in use.
 */
export function qsDecodeVerdict(s: {
  bytes: number;
  frames: number;
  bytesSkipped: number;
  lengthErrors: number;
  targetInfos: number;
}): DecodeVerdict {
  if (s.bytes === 0) return { failure: EMPTY_INPUT };
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
 * The threads a decode of `file` uses of `asked`: at most one a segment of the input (a file
 * smaller than a segment decodes on one thread): each thread costs its start-up and tens of
 * MB, for nothing where there is nothing to share out. Stdin's size is not known beforehand.
 */
function threadsFor(asked: number, file: string | undefined, segmentBytes: number): number {
  let threads = asked;
  if (threads > 1 && file !== undefined && file !== '-') {
    const bytes = statSync(file, { throwIfNoEntry: false })?.size;
    if (bytes !== undefined) threads = Math.max(1, Math.min(threads, Math.ceil(bytes / segmentBytes)));
  }
  return threads;
}
