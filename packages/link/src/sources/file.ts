import { createReadStream, statSync } from 'node:fs';
import type { LinkSink, LinkSource } from '../link-source.js';
import { LinkWriteError } from '../link-source.js';

export type ReplayPace = 'max' | 'original';

/** At `original` pace, slices of link time sent per second: 100, so 10 ms of bytes each. */
const TICKS_PER_SECOND = 100;

export interface FileSourceOptions {
  /** `max`: as fast as the bus takes it; `original`: at the link's bit rate. */
  pace: ReplayPace;
  /** Link bit rate for `original` pace (8N1: ten bits a byte). */
  bitsPerSecond: number;
  /** Read size. */
  readBytes: number;
  /** Called as the file is read: bytes so far and in all. */
  onProgress?: (done: number, total: number) => void;
}

/**
 * `file:PATH`: replays a capture as one link session. A file can wait, so unlike a live link
 * it reads only as fast as the publisher has room: nothing is ever dropped.
 */
export class FileSource implements LinkSource {
  readonly kind = 'file';
  readonly description: string;
  readonly finished: Promise<void>;
  private finish!: () => void;
  private fail!: (err: Error) => void;
  private stopped = false;

  constructor(
    private readonly path: string,
    private readonly options: FileSourceOptions,
  ) {
    this.description = `file ${path}`;
    this.finished = new Promise((resolve, reject) => {
      this.finish = resolve;
      this.fail = reject;
    });
    this.finished.catch(() => {});
  }

  async start(sink: LinkSink): Promise<void> {
    let total: number;
    try {
      total = statSync(this.path).size;
    } catch (err) {
      throw new Error(`cannot read ${this.path}: ${(err as Error).message}`);
    }
    void this.pump(sink, total);
  }

  private async pump(sink: LinkSink, total: number): Promise<void> {
    const { pace, bitsPerSecond, readBytes, onProgress } = this.options;
    const started = performance.now();
    let done = 0;
    sink.connected(this.description);
    try {
      for await (const piece of createReadStream(this.path, { highWaterMark: readBytes })) {
        if (this.stopped) break;
        await sink.waitForRoom();
        const bytes = piece as Buffer;
        if (pace !== 'original') {
          sink.data(bytes);
          done += bytes.length;
          onProgress?.(done, total);
          continue;
        }
        // At the link's bit rate the bytes go out in slices of about one tick of link time,
        // each when its first byte is due, as a UART would deliver them: never a read's worth
        // at once (a small file would otherwise go out in one burst).
        const slice = Math.max(1, Math.floor(bitsPerSecond / 10 / TICKS_PER_SECOND));
        for (let at = 0; at < bytes.length && !this.stopped; at += slice) {
          const dueMs = ((done * 10) / bitsPerSecond) * 1000;
          const waitMs = dueMs - (performance.now() - started);
          if (waitMs > 1) await new Promise((r) => setTimeout(r, waitMs));
          const part = bytes.subarray(at, at + slice);
          sink.data(part);
          done += part.length;
          onProgress?.(done, total);
        }
      }
      sink.disconnected('end of file');
      this.finish();
    } catch (err) {
      sink.disconnected(`read error: ${(err as Error).message}`);
      this.fail(err as Error);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
  }

  write(): Promise<number> {
    return Promise.reject(new LinkWriteError('a file link cannot be written to'));
  }
}
