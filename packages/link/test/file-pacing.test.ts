import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSource } from '../src/sources/file.js';

describe('file replay at the original pace', () => {
  it('sends a small file smoothly at the link bit rate, not in one burst', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'th-pace-'));
    try {
      const path = join(dir, 'capture.bin');
      writeFileSync(path, Buffer.alloc(6000, 0x7e));
      // 100 000 bit/s, 8N1: 10 000 bytes a second, so 6000 bytes take 0.6 s.
      const source = new FileSource(path, { pace: 'original', bitsPerSecond: 100_000, readBytes: 16 * 1024 });
      const arrivals: Array<{ ms: number; bytes: number }> = [];
      let started = 0;
      const ended = new Promise<void>((resolve) => {
        void source.start({
          connected: () => {
            started = performance.now();
          },
          data: (bytes) => arrivals.push({ ms: performance.now() - started, bytes: bytes.length }),
          disconnected: () => resolve(),
          waitForRoom: async () => {},
        });
      });
      await ended;
      const total = arrivals.reduce((n, a) => n + a.bytes, 0);
      expect(total).toBe(6000);
      // Slices of about 10 ms of link time (100 bytes), spread over the 0.6 s the bytes take.
      expect(arrivals.length).toBeGreaterThanOrEqual(50);
      expect(Math.max(...arrivals.map((a) => a.bytes))).toBeLessThanOrEqual(100);
      const last = arrivals[arrivals.length - 1].ms;
      expect(last).toBeGreaterThan(500);
      expect(last).toBeLessThan(1500);
      // No byte early: by any arrival, no more bytes than the link could have carried by then (+1 slice).
      let sent = 0;
      for (const a of arrivals) {
        sent += a.bytes;
        expect(sent - a.bytes).toBeLessThanOrEqual((a.ms / 1000) * 10_000 + 100);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
