import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DirectStdout } from '../src/command-io.js';

describe('DirectStdout', () => {
  it('waits while a non-blocking pipe is full, and writes every byte in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tracehub-direct-'));
    try {
      const fifo = join(dir, 'out');
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      // Opened for reading and writing, a FIFO opens at once; non-blocking, a full one says EAGAIN.
      const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
      // A reader that starts late: the first 64 KiB fill the pipe, the rest has to wait for it.
      const reader = spawn('sh', ['-c', `sleep 0.3; sha256sum < "${fifo}"`], { stdio: ['ignore', 'pipe', 'inherit'] });
      let digest = '';
      reader.stdout.on('data', (d: Buffer) => {
        digest += d.toString();
      });
      const bytes = randomBytes(4 << 20);
      const output = new DirectStdout(fd);
      const started = Date.now();
      output.write(bytes.subarray(0, 1 << 20));
      output.write(bytes.subarray(1 << 20));
      const waited = Date.now() - started;
      closeSync(fd);
      await once(reader, 'exit');
      expect(digest.split(' ')[0]).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect(waited).toBeGreaterThanOrEqual(250);
      expect(output.readerGone).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stops quietly when the reader has gone (EPIPE)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tracehub-direct-'));
    try {
      const fifo = join(dir, 'out');
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      // A reader that reads nothing and goes: the write end then has no reader left.
      const readFd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      const fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
      closeSync(readFd);
      const output = new DirectStdout(fd);
      output.write(Buffer.alloc(1000, 0x41));
      expect(output.readerGone).toBe(true);
      closeSync(fd);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
