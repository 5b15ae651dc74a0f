import { once } from 'node:events';
import { createReadStream, statSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { ProgressBar, type ProgressOutput } from './progress-bar.js';

/** Files are read a megabyte at a time. */
const READ_CHUNK = 1 << 20;
/** Inputs at least this big get a progress bar (when stderr is a terminal). */
const PROGRESS_MIN_BYTES = 8 << 20;

/**
 * Standard output of a command: writes wait for 'drain' when the reader is slower, and a
 * reader that goes away (`| head`: EPIPE) ends the output quietly, as it does for qspy.
 */
export class CommandOutput {
  private gone = false;
  private readonly onError = (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') this.gone = true;
    else throw err;
  };

  constructor(private readonly out: Writable) {
    out.on('error', this.onError);
  }

  /** True once the reader has gone: stop producing output. */
  get readerGone(): boolean {
    return this.gone;
  }

  /**
   * Writes `data`; `written` is called once the stream is done with it (so that its memory can
   * be used again), or at once when the reader has gone.
   */
  async write(data: string | Uint8Array, written?: () => void): Promise<void> {
    if (this.gone) {
      written?.();
      return;
    }
    if (this.out.write(data, written && (() => written()))) return;
    try {
      await once(this.out, 'drain');
    } catch (err) {
      this.onError(err as NodeJS.ErrnoException);
    }
  }

  close(): void {
    this.out.off('error', this.onError);
  }
}

/** What `DirectStdout` waits on: nothing ever wakes it, so `Atomics.wait` is a sleep. */
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * The process's standard output written directly and synchronously (fd 1), for a command whose
 * output is the whole of its work: each block is written by the time `write` returns, so the
 * caller fills the same block again while it is still in the cache, and no stream holds blocks
 * until it calls back (`tracehub decode` of the QS bench capture, alternated with the stream
 * path: 0.77 s CPU against 0.91 s, 81 MB peak RSS against 93 MB). A reader that goes away
 * (`| head`: EPIPE) ends the output quietly, as it does for qspy; a non-blocking pipe that is
 * full (EAGAIN) is waited for. process.stdout must not be used beside it: its writes would come
 * out of order.
 */
export class DirectStdout {
  private gone = false;

  /** @param fd the output's file descriptor: standard output unless a test gives another */
  constructor(private readonly fd = 1) {}

  /** True once the reader has gone: stop producing output. */
  get readerGone(): boolean {
    return this.gone;
  }

  write(bytes: Uint8Array): void {
    let at = 0;
    while (at < bytes.length && !this.gone) {
      try {
        at += writeSync(this.fd, bytes, at, bytes.length - at);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') this.gone = true;
        else if (code === 'EAGAIN') Atomics.wait(sleeper, 0, 0, 1);
        else throw err;
      }
    }
  }
}

/** A command's input: FILE read in chunks, or stdin for `-`, with a progress bar for big files. */
export function openInput(
  file: string,
  stdin: Readable,
  stderr: ProgressOutput,
): { input: AsyncIterable<Buffer> & Readable; progress: ProgressBar | undefined } {
  if (file === '-') return { input: stdin, progress: undefined };
  return { input: createReadStream(file, { highWaterMark: READ_CHUNK }), progress: fileProgress(file, stderr) };
}

/**
 * A command's input for a consumer that is done with each chunk before the next (see
 * `fileChunks`): FILE read into one buffer again and again, or stdin for `-`, with a progress
 * bar for big files.
 */
export function openInputChunks(
  file: string,
  stdin: Readable,
  stderr: ProgressOutput,
  readBytes = FILE_READ_BYTES,
): { input: AsyncIterable<Uint8Array>; progress: ProgressBar | undefined } {
  if (file === '-') return { input: stdin, progress: undefined };
  return { input: fileChunks(file, readBytes), progress: fileProgress(file, stderr) };
}

/** The progress bar of reading FILE: for big files, when stderr is a terminal. */
function fileProgress(file: string, stderr: ProgressOutput): ProgressBar | undefined {
  return ProgressBar.forBytes(statSync(file).size, '', stderr, PROGRESS_MIN_BYTES);
}

/**
 * Bytes of each read of `fileChunks`. Half a megabyte, not one: V8 counts buffers outside its
 * heap towards starting a full collection, and with the decoder's line tables a megabyte more
 * brought one into the middle of a decode of the fixtures repeated (32 MB, the bench's dpp_mix):
 * after it, the scavenges promoted what the decoder's caches held, 1.2 MB each, and the decode
 * took 9% longer (747 -> 818 ms, 9 alternated runs). Reads of half a megabyte cost no more
 * (packages/qs PERFORMANCE.md).
 */
const FILE_READ_BYTES = 1 << 19;

/**
 * A file's bytes, read into one buffer that each read fills again: for a consumer that is done
 * with a chunk before it asks for the next. Fresh buffers (a read stream's) pile up outside V8's
 * heap until a collection comes, tens of megabytes for a big file, while here nothing is left
 * behind and no page is faulted in twice.
 */
export async function* fileChunks(path: string, readBytes = FILE_READ_BYTES): AsyncGenerator<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    const buffer = new Uint8Array(readBytes);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) return;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/**
 * The session id of an offline decode's JSON records. node:crypto is loaded only for it: it is a
 * tenth of the text command's start-up.
 */
export async function offlineSessionId(): Promise<string> {
  const { randomUUID } = await import('node:crypto');
  return `offline-${randomUUID()}`;
}
