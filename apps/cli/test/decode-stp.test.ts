import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { isTraceRecord } from '@tracehub/contracts';
import { decodeOst, decodePhonet } from '@tracehub/stp';
import { fixturePath, peakRssMb, readThenClose } from '@tracehub/tests/support';
import { afterAll, describe, expect, it } from 'vitest';
import { runStpDecode } from '../src/commands/decode-stp.js';
import { NOTHING_DECODED_EXIT } from '../src/commands/decode-verdict.js';

const dir = fixturePath('stp');
const names = readdirSync(dir)
  .filter((f) => f.endsWith('.expected.json'))
  .map((f) => f.replace('.expected.json', ''))
  .sort();
const tmp = mkdtempSync(join(tmpdir(), 'decode-stp-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs the command function as `tracehub decode` would, collecting stdout and stderr. */
async function decode(file: string, opts: Record<string, unknown>, stdinBytes?: Uint8Array) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (b: Buffer) => out.push(b));
  stderr.on('data', (b: Buffer) => err.push(b));
  const stdin = Readable.from(stdinBytes ? [Buffer.from(stdinBytes)] : []);
  const status = await runStpDecode(file, { protocol: 'stp', format: 'text', ...opts }, { stdin, stdout, stderr });
  return { stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString(), status };
}

const ndjson = (b: Buffer) =>
  b
    .toString()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

function cut<T>(list: T[]): (T | { pkt: string; omitted: number })[] {
  return list.length <= 400
    ? list
    : [...list.slice(0, 200), { pkt: '...', omitted: list.length - 400 }, ...list.slice(-200)];
}

const noAt = (events: Record<string, unknown>[]) => events.map(({ at_nibble: _, ...e }) => e);

describe('tracehub decode --protocol stp', () => {
  for (const name of names) {
    it(`${name}: --format events (ost, phonet) and --format packets match the reference`, async () => {
      const expected = JSON.parse(readFileSync(join(dir, `${name}.expected.json`), 'utf8'));
      const configFile = join(tmp, `${name}.config.json`);
      writeFileSync(configFile, JSON.stringify(expected.config));
      const file = join(dir, `${name}.stp`);
      for (const output of ['ost', 'phonet']) {
        const { stdout } = await decode(file, { stpConfig: configFile, output, format: 'events' });
        expect(noAt(ndjson(stdout))).toEqual(noAt(expected[output]));
      }
      const { stdout } = await decode(file, { stpConfig: configFile, format: 'packets' });
      expect(cut(ndjson(stdout))).toEqual(expected.packets);
    });
  }

  it('prints readable text, NDJSON TraceRecords and the binary OST/PhoNet messages; reads stdin', async () => {
    const file = join(dir, 'coresight_juno.stp');
    const bytes = readFileSync(file);
    const text = await decode('-', { format: 'text' }, bytes);
    const lines = text.stdout.toString().trim().split('\n');
    expect(lines.length).toBe(41);
    expect(lines.at(-1)).toContain('ba ad f0 0d');
    expect(text.stderr).toMatch(/^stp: 435 bytes, 870 nibbles, 41 messages/);

    const json = ndjson((await decode(file, { format: 'json' })).stdout);
    expect(json.length).toBe(41);
    expect(json.every((r) => isTraceRecord(r))).toBe(true);
    expect(json[40]).toMatchObject({
      protocol: 'stp',
      kind: 'record',
      name: 'STP_MESSAGE',
      stp: { master: 0x41, channel: 0x0f },
    });

    for (const [format, decodeOne] of [
      ['ost-bin', decodeOst],
      ['phonet-bin', decodePhonet],
    ] as const) {
      const bin = new Uint8Array((await decode(file, { format })).stdout);
      const messages = [];
      for (let offset = 0; offset < bin.length; ) {
        const r = decodeOne(bin, offset);
        if (r.status !== 'ok') throw new Error(`${format}: ${r.status} at ${offset}`);
        messages.push(r.message);
        offset += r.size;
      }
      expect(messages.length).toBe(41);
      const last = messages[40];
      expect(last.kind === 'trace' && Buffer.from(last.data).toString('hex')).toBe('baadf00d');
    }
  });

  it('takes --stp-version and --little-endian-masters from the command line', async () => {
    const file = join(dir, 'v1_data_sizes_endian.stp');
    const expected = JSON.parse(readFileSync(join(dir, 'v1_data_sizes_endian.expected.json'), 'utf8'));
    const { stdout } = await decode(file, {
      stpVersion: 1,
      littleEndianMasters: expected.config.little_endian_masters,
      format: 'events',
    });
    expect(noAt(ndjson(stdout))).toEqual(noAt(expected.ost));
  });

  it('says when a stream decodes to nothing, names the likely option, and exits non-zero', async () => {
    const v1 = join(dir, 'v1_interleave.stp');
    const bare = await decode(v1, {});
    expect(bare.stdout.toString()).toBe('66 nibbles skipped before synchronisation\n');
    expect(bare.stderr).toContain('tracehub: nothing decoded');
    expect(bare.stderr).toContain('66 of 66 nibbles skipped');
    expect(bare.stderr).toContain('--stp-version 1');
    expect(bare.status).toBe(NOTHING_DECODED_EXIT);

    const right = await decode(v1, { stpVersion: 1 });
    expect(right.stderr).not.toContain('warning');
    expect(right.status).toBe(0);

    // A QS capture given as STP: the warning says what it looks like.
    const qs = await decode(fixturePath('qs', 'dpp_qv.qs'), {});
    expect(qs.stderr).toContain('try --protocol qs');
    expect(qs.status).toBe(NOTHING_DECODED_EXIT);

    // Something decoded, but most of the stream skipped: a warning, exit 0.
    const wrong = await decode(join(dir, 'coresight_juno.stp'), { stpVersion: 1 });
    expect(wrong.stderr).toContain('tracehub: warning: most of the stream skipped');
    expect(wrong.stderr).toContain('drop --stp-version 1');
    expect(wrong.status).toBe(0);

    // An empty input decodes to nothing too, as it does for qs.
    const empty = join(tmp, 'empty.stp');
    writeFileSync(empty, new Uint8Array(0));
    const none = await decode(empty, {});
    expect(none.status).toBe(NOTHING_DECODED_EXIT);
    expect(none.stderr).toContain('tracehub: nothing decoded: the input is empty');
  });

  it('decodes --protocol swd', async () => {
    const file = join(tmp, 'frames.swd');
    writeFileSync(file, Uint8Array.of(0xc0, 0x01, 0x7d, 0x5d, 0xc1, 0x00, 0xc0, 0xc1));
    const { stdout, stderr } = await decode(file, { protocol: 'swd', format: 'ost-bin' });
    const r = decodeOst(new Uint8Array(stdout));
    expect(r.status === 'ok' && r.message.kind === 'swd' && Array.from(r.message.data)).toEqual([0x01, 0x7d]);
    expect(stderr).toMatch(/^swd: 8 bytes, 1 messages/);
  });

  it('writes --port and --processor into the swd wrapper messages, and checks their range', async () => {
    const file = join(tmp, 'ports.swd');
    writeFileSync(file, Uint8Array.of(0xc0, 0x01, 0x02, 0xc1));
    const ost = await decode(file, { protocol: 'swd', format: 'ost-bin', port: 0x21, processor: 3 });
    const o = decodeOst(new Uint8Array(ost.stdout));
    expect(o.status === 'ok' && o.message.kind === 'swd' && [o.message.port, o.message.processor]).toEqual([0x21, 3]);
    const phonet = await decode(file, { protocol: 'swd', format: 'phonet-bin', port: 0x21, processor: 3 });
    const p = decodePhonet(new Uint8Array(phonet.stdout));
    expect(p.status === 'ok' && p.message.kind === 'swd' && p.message.processor).toBe(3);
    // The defaults: port 0x0b, processor 0.
    const plain = decodeOst(new Uint8Array((await decode(file, { protocol: 'swd', format: 'ost-bin' })).stdout));
    expect(
      plain.status === 'ok' && plain.message.kind === 'swd' && [plain.message.port, plain.message.processor],
    ).toEqual([0x0b, 0]);
    // Out of range on the command line: commander's parser says what a byte is.
    const tracehub = fileURLToPath(new URL('../bin/tracehub.js', import.meta.url));
    const bad = spawnSync(process.execPath, [tracehub, 'decode', '-p', 'swd', '--processor', '256', file], {
      encoding: 'utf8',
    });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('must be a number 0..255');
  });

  it('ends quietly, with status 0, when its reader goes away (| head)', async () => {
    const name = names[0];
    const one = readFileSync(join(dir, `${name}.stp`));
    const file = join(tmp, 'long.stp');
    writeFileSync(file, Buffer.concat(Array.from({ length: Math.ceil((4 << 20) / one.length) }, () => one)));
    const tracehub = fileURLToPath(new URL('../bin/tracehub.js', import.meta.url));
    const { status, stderr, received } = await readThenClose(process.execPath, [
      tracehub,
      'decode',
      '-p',
      'stp',
      '-f',
      'packets',
      file,
    ]);
    expect(received).toBeGreaterThan(0);
    expect(stderr).not.toMatch(/EPIPE|Error|tracehub:/);
    expect(status).toBe(0);
  });

  it('keeps its memory flat on a long stream: its output blocks come back for reuse between reads', async () => {
    // coresight_juno lists about four bytes of packets per byte of stream: 16 MB of it make 60 MB
    // of text. Written as blocks that are reused once written, the command stays near its size
    // of a small stream (about 70 MB); blocks never handed back pile up (250 MB and more).
    const one = readFileSync(join(dir, 'coresight_juno.stp'));
    const file = join(tmp, 'flat.stp');
    writeFileSync(file, Buffer.concat(Array.from({ length: Math.ceil((16 << 20) / one.length) }, () => one)));
    const tracehub = fileURLToPath(new URL('../bin/tracehub.js', import.meta.url));
    const child = spawn(tracehub, ['decode', '-p', 'stp', '-f', 'packets', file], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    // The kernel's high-water mark of the process's resident memory, read until it exits.
    let peakMB = 0;
    const poll = setInterval(() => {
      try {
        peakMB = Math.max(peakMB, peakRssMb(child.pid as number));
      } catch {
        // gone already
      }
    }, 10);
    const [status] = await once(child, 'exit');
    clearInterval(poll);
    expect(status, stderr).toBe(0);
    expect(stderr).toMatch(/^stp: 16\d{6} bytes/);
    expect(peakMB).toBeGreaterThan(0);
    expect(peakMB).toBeLessThan(150);
  });
});
