import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { type QsDecoderOptions, type QsDecoderStats, QsStreamSegments, TextBlocks } from '@tracehub/qs';
import type { CommandOutput } from '../command-io.js';
import type { ProgressBar } from '../progress-bar.js';
import { decodeSegmentText, type QsSegment, type QsSegmentText, type QsTextSeen } from './qs-text-output.js';

/** The bytes a thread decodes at a time: a read of a file, big enough that the hand-over is cheap. */
export const SEGMENT_BYTES = 1 << 20;

/** What the main thread sends a decoding thread. */
export type QsThreadMessage =
  /** A segment to decode. */
  | ({ kind: 'segment' } & QsSegment)
  /** Output blocks written out, to be filled again. */
  | { kind: 'recycle'; blocks: Uint8Array[] };

/** Where segments are decoded: a worker thread, or this thread between reads and writes. */
interface SegmentDecoder {
  /** Segments sent and not answered yet. */
  readonly queued: number;
  decode(segment: QsSegment): Promise<QsSegmentText>;
  /** Gives written blocks back to be filled again. */
  recycle(blocks: Uint8Array[]): void;
  stop(): Promise<void>;
}

/** A worker thread: segments are answered in the order they were sent. */
class WorkerSegments implements SegmentDecoder {
  private readonly worker = new Worker(new URL('./decode-qs-worker.js', import.meta.url));
  private readonly waiting: { resolve: (t: QsSegmentText) => void; reject: (e: Error) => void }[] = [];

  constructor() {
    this.worker.on('message', (t: QsSegmentText) => {
      const w = this.waiting.shift();
      if (t.error !== undefined) w?.reject(new Error(`a decoding thread failed: ${t.error}`));
      else w?.resolve(t);
    });
    this.worker.on('error', (err) => this.failAll(err));
    this.worker.on('exit', (code) => {
      if (this.waiting.length > 0) this.failAll(new Error(`a decoding thread exited (code ${code}) with work left`));
    });
  }

  get queued(): number {
    return this.waiting.length;
  }

  decode(segment: QsSegment): Promise<QsSegmentText> {
    const text = new Promise<QsSegmentText>((resolve, reject) => this.waiting.push({ resolve, reject }));
    this.post({ kind: 'segment', ...segment }, segment.chunks);
    return text;
  }

  recycle(blocks: Uint8Array[]): void {
    this.post({ kind: 'recycle', blocks }, blocks);
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }

  /** Posts `message`, moving the memory of `views` to the thread (no copy; each owns its memory). */
  private post(message: QsThreadMessage, views: Uint8Array[]): void {
    this.worker.postMessage(
      message,
      views.map((v) => v.buffer as ArrayBuffer),
    );
  }

  private failAll(err: Error): void {
    for (const w of this.waiting.splice(0)) w.reject(err);
  }
}

/** This thread: a segment is decoded at once, when it is handed over. */
class InThreadSegments implements SegmentDecoder {
  readonly queued = 0;
  private readonly output = new TextBlocks('latin1');

  decode(segment: QsSegment): Promise<QsSegmentText> {
    return Promise.resolve(decodeSegmentText(segment, this.output));
  }

  recycle(blocks: Uint8Array[]): void {
    for (const block of blocks) this.output.recycle(block);
  }

  async stop(): Promise<void> {}
}

/**
 * Decodes a QS stream to qspy's text on `threads` threads (this one and `threads - 1` workers)
 * and writes it in order. This thread reads, groups the chunks into segments and skims each
 * (QsStreamSegments) for the decoder state the next one starts from; a segment goes to a
 * worker with fewer than two waiting, else this thread decodes it itself, so the work spreads
 * by how fast each thread gets through it. At most two segments a thread are in flight, so
 * memory stays flat whatever the input size. Written blocks go back to the thread that filled
 * them (when `recycle`: the output is the process's own stdout, which is done with a block
 * once its write calls back).
 */
export async function decodeQsTextInThreads(
  input: AsyncIterable<Buffer> & Readable,
  options: QsDecoderOptions,
  plan: { threads: number; segmentBytes: number; recycle: boolean },
  out: CommandOutput,
  progress: ProgressBar | undefined,
): Promise<{ stats: QsDecoderStats; seen: QsTextSeen }> {
  const segments = new QsStreamSegments(options);
  const workers = Array.from({ length: plan.threads - 1 }, () => new WorkerSegments());
  const inThread = new InThreadSegments();
  const inFlight: { thread: SegmentDecoder; text: Promise<QsSegmentText> }[] = [];
  const stats: Record<string, number> = {};
  const seen: QsTextSeen = { lengthErrors: 0, targetInfos: 0 };

  const writeOldest = async () => {
    const { thread, text: pending } = inFlight.shift() as (typeof inFlight)[number];
    const text = await pending;
    for (const [k, v] of Object.entries(text.stats)) stats[k] = (stats[k] ?? 0) + v;
    seen.lengthErrors += text.seen.lengthErrors;
    seen.targetInfos += text.seen.targetInfos;
    for (const block of text.blocks) {
      await out.write(block, plan.recycle ? () => thread.recycle([block]) : undefined);
    }
  };
  const send = async (chunks: Uint8Array[], last: boolean) => {
    const snapshot = segments.start(...chunks);
    const idle = workers.reduce<SegmentDecoder | undefined>((a, w) => (w.queued < (a?.queued ?? 2) ? w : a), undefined);
    const thread = idle ?? inThread;
    inFlight.push({ thread, text: thread.decode({ chunks, snapshot, last }) });
    while (inFlight.length >= 2 * plan.threads) await writeOldest();
  };

  try {
    // A full segment waits until more input (or the end) says whether it is the last one.
    let held: Uint8Array[] | undefined;
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    const segmentFull = async () => {
      if (held) await send(held, false);
      held = pending;
      pending = [];
      pendingBytes = 0;
    };
    let read = 0;
    for await (const chunk of input) {
      read += chunk.length;
      progress?.update(read);
      let rest = ownMemory(chunk);
      // Segments are whole chunks when the sizes line up (files are read a megabyte at a time);
      // else the part of a chunk that ends a segment is copied out.
      while (pendingBytes + rest.length > plan.segmentBytes) {
        const room = plan.segmentBytes - pendingBytes;
        pending.push(rest.slice(0, room));
        rest = rest.subarray(room);
        await segmentFull();
      }
      if (rest.length > 0) {
        pending.push(rest);
        pendingBytes += rest.length;
      }
      if (pendingBytes === plan.segmentBytes) await segmentFull();
      if (out.readerGone) {
        input.destroy();
        break;
      }
    }
    if (!out.readerGone) {
      if (pendingBytes > 0 || !held) {
        if (held) await send(held, false);
        await send(pending, true);
      } else {
        await send(held, true);
      }
    }
    while (inFlight.length > 0) await writeOldest();
  } finally {
    // After a failure segments are left in flight: nothing waits for them any more.
    for (const { text } of inFlight) text.catch(() => {});
    await Promise.all(workers.map((w) => w.stop()));
  }
  return { stats: stats as unknown as QsDecoderStats, seen };
}

/**
 * The chunk as a view of memory of its own, which can move to another thread: a file's chunks
 * are (a read stream gives each read its own buffer); a pipe's may be slices of a shared pool.
 */
function ownMemory(chunk: Buffer): Uint8Array {
  if (
    chunk.byteOffset === 0 &&
    chunk.buffer.byteLength === chunk.length &&
    !(chunk.buffer instanceof SharedArrayBuffer)
  ) {
    return new Uint8Array(chunk.buffer, 0, chunk.length);
  }
  return new Uint8Array(chunk);
}
