import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandOutput } from '../src/command-io.js';
import { downloadFromApi } from '../src/commands/through-api.js';
import { ProgressBar } from '../src/progress-bar.js';

// The progress bar of a download through the API, from the totals the API's export sends in
// its headers (tests/api/cli-through-api.test.ts checks the headers and the bytes against the real API).
const RAW_BYTES = 5 * 1024 * 1024;
const LINES = 150_000;
let server: ReturnType<typeof createServer>;
let api: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith('/api/v1/raw')) {
      res.writeHead(200, { 'x-tracehub-link-bytes': String(RAW_BYTES) });
      for (let i = 0; i < RAW_BYTES / 65536; i++) res.write(Buffer.alloc(65536, i));
    } else {
      res.writeHead(200, { 'x-tracehub-records': String(LINES) });
      for (let i = 0; i < LINES; i += 1000) res.write(`record\n`.repeat(1000));
    }
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Downloads `path` to a sink, drawing the bar on a pretend terminal; what the terminal got and the bytes. */
async function download(path: string): Promise<{ drawn: string; bytes: number }> {
  let bytes = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done();
    },
  });
  let drawn = '';
  const terminal = { isTTY: true, write: (text: string) => (drawn += text) };
  await downloadFromApi({ api }, path, {}, new CommandOutput(sink), { label: 'export ', out: terminal });
  return { drawn, bytes };
}

describe('a download through the API', () => {
  it('draws the bar of a raw export by link bytes', async () => {
    const { drawn, bytes } = await download('/raw');
    expect(bytes).toBe(RAW_BYTES);
    expect(drawn).toMatch(/\rexport \[#{30}\] 100% {2}5\.2\/5\.2 MB .*\n$/);
  });

  it('draws the bar of a text export by records, a line each', async () => {
    const { drawn, bytes } = await download('/lines');
    expect(bytes).toBe(LINES * 'record\n'.length);
    expect(drawn).toMatch(/\rexport \[#{30}\] 100% {2}150\.0\/150\.0 k records .*\n$/);
  });
});

describe('ProgressBar.waiting', () => {
  it('counts the seconds on a terminal and ends its line; nothing elsewhere', () => {
    let drawn = '';
    const waiting = ProgressBar.waiting('redecode on the API server', { isTTY: true, write: (t) => (drawn += t) });
    waiting?.done();
    expect(drawn).toMatch(/^\rredecode on the API server {2}0 s (\rredecode on the API server {2}0 s )*\n$/);
    expect(ProgressBar.waiting('x', { isTTY: false, write: () => {} })).toBeUndefined();
  });
});
