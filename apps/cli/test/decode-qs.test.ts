import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { validateTraceRecord } from '@tracehub/contracts';
import { QsDecoder } from '@tracehub/qs';
import { fixturePath, qspyLines, readThenClose } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import { runQsDecode } from '../src/commands/decode-qs.js';
import { NOTHING_DECODED_EXIT } from '../src/commands/decode-verdict.js';

const FIXTURES = [
  'defer',
  'dpp_posix',
  'dpp_qv',
  'dpp_qv_bitflip',
  'dpp_qv_gap',
  'dpp_qv_garbage',
  'dpp_qv_midstream',
  'fmt_v32s',
  'fmt_v64',
];

/** qspy's output from line 8 up to (not including) the closing empty line and `QSPY Done`. */
function expectedText(name: string): Buffer {
  return Buffer.from(`${qspyLines(name).join('\n')}\n`, 'latin1');
}

/** Runs `use` on a temporary file of every fixture, `times` over, then removes it. */
async function withRepeatedFixtures(times: number, use: (file: string) => Promise<void>): Promise<void> {
  const one = Buffer.concat(FIXTURES.map((name) => readFileSync(fixturePath('qs', `${name}.qs`))));
  const dir = mkdtempSync(join(tmpdir(), 'tracehub-decode-'));
  try {
    const file = join(dir, 'repeated.qs');
    writeFileSync(file, Buffer.concat(Array.from({ length: times }, () => one)));
    await use(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Collects what is written, slowly, so that the command has to wait for 'drain'. */
class SlowSink extends Writable {
  chunks: Buffer[] = [];
  constructor() {
    super({ highWaterMark: 256 });
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.chunks.push(chunk);
    setImmediate(done);
  }
}

describe('tracehub decode --protocol qs', () => {
  for (const name of FIXTURES) {
    it(`prints qspy's lines for ${name}.qs (the built command, writing its stdout directly)`, () => {
      const tracehub = fileURLToPath(new URL('../bin/tracehub.js', import.meta.url));
      const run = spawnSync(
        process.execPath,
        [tracehub, 'decode', '--protocol', 'qs', fixturePath('qs', `${name}.qs`)],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
          maxBuffer: 1 << 28,
        },
      );
      expect(run.status, run.stderr.toString()).toBe(0);
      expect(run.stdout.equals(expectedText(name))).toBe(true);
      expect(run.stderr.toString()).toMatch(/^qs: \d+ bytes, \d+ frames, \d+ records, \d+ errors, \d+ gaps/);
    });
  }

  it('reads stdin with -, writes NDJSON TraceRecords and waits for a slow reader', async () => {
    const stdin = new PassThrough();
    const stdout = new SlowSink();
    const stderr = new PassThrough();
    let summary = '';
    stderr.on('data', (d: Buffer) => {
      summary += d.toString();
    });
    const bytes = readFileSync(fixturePath('qs', 'dpp_qv_garbage.qs'));
    // Fed in small pieces, as a pipe would.
    setImmediate(() => {
      for (let off = 0; off < bytes.length; off += 1000) stdin.write(bytes.subarray(off, off + 1000));
      stdin.end();
    });
    await runQsDecode('-', { format: 'json' }, { stdin, stdout, stderr });
    const records = Buffer.concat(stdout.chunks)
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    for (const r of records) expect(validateTraceRecord(r)).toEqual([]);
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i));
    expect(new Set(records.map((r) => r.session)).size).toBe(1);
    expect(records[0]).toMatchObject({ rig: 'offline', link: 'file', protocol: 'qs', chunk: 0 });
    const text = records
      .map((r) => r.text)
      .filter((t) => t !== '')
      .join('\n');
    expect(Buffer.from(`${text}\n`, 'latin1').equals(expectedText('dpp_qv_garbage'))).toBe(true);
    const gaps = records.filter((r) => r.name === 'SEQ_GAP');
    expect(gaps.map((g) => g.fields.lost)).toEqual([1, 2, 1, 1]);
    expect(summary).toContain('4 gaps (5 frames lost)');
  });

  it('the built command writes through a pipe what it writes to a stream, over many output blocks', async () => {
    // Every fixture, twenty times over: some 3 MB of text, a dozen output blocks used again and again.
    await withRepeatedFixtures(20, async (file) => {
      const stdout = new SlowSink();
      await runQsDecode(file, { format: 'text' }, { stdin: new PassThrough(), stdout, stderr: new PassThrough() });
      const inProcess = Buffer.concat(stdout.chunks);
      expect(inProcess.length).toBeGreaterThan(10 * 256 * 1024);
      const tracehub = fileURLToPath(new URL('../bin/tracehub.js', import.meta.url));
      const child = spawnSync(process.execPath, [tracehub, 'decode', '--protocol', 'qs', file], {
        stdio: ['ignore', 'pipe', 'pipe'],
        maxBuffer: 1 << 28,
      });
      expect(child.status).toBe(0);
      expect(child.stdout.equals(inProcess)).toBe(true);
    });
  });

  it('the built command ends quietly, with status 0, when its reader goes away (| head), on one thread or several', async () => {
    await withRepeatedFixtures(50, async (file) => {
      const tracehub = fileURLToPath(new URL('../bin/tracehub.js', import.meta.url));
      for (const threads of ['1', '2']) {
        const run = await readThenClose(process.execPath, [tracehub, 'decode', '-p', 'qs', '--threads', threads, file]);
        expect(run.received, `${threads} threads`).toBeGreaterThan(0);
        expect(run.stderr, `${threads} threads`).not.toMatch(/EPIPE|Error|tracehub:/);
        expect(run.status, `${threads} threads`).toBe(0);
      }
    });
  });

  it('the built command decodes on several threads exactly what qspy printed, wherever the segments are cut', () => {
    const tracehub = fileURLToPath(new URL('../bin/tracehub.js', import.meta.url));
    const decode = (args: string[], input?: Buffer) =>
      spawnSync(process.execPath, [tracehub, 'decode', '--protocol', 'qs', ...args], {
        input,
        stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
        maxBuffer: 1 << 28,
      });
    for (const name of FIXTURES) {
      const file = fixturePath('qs', `${name}.qs`);
      const one = decode(['--threads', '1', file]);
      expect(one.status).toBe(0);
      const many = decode(['--threads', '3', '--segment-bytes', '997', file]);
      expect(many.status, `${name}: ${many.stderr}`).toBe(0);
      expect(many.stdout.equals(expectedText(name)), name).toBe(true);
      // The summary sums what every segment's decoder counted.
      expect(many.stderr.toString()).toBe(one.stderr.toString());
      const piped = decode(['--threads', '2', '--segment-bytes', '1500', '-'], readFileSync(file));
      expect(piped.stdout.equals(expectedText(name)), `${name} from stdin`).toBe(true);
    }
  });

  it('decodes a small file on one thread whatever is asked, and says so', () => {
    const tracehub = fileURLToPath(new URL('../bin/tracehub.js', import.meta.url));
    const name = FIXTURES[0];
    const run = spawnSync(
      process.execPath,
      [tracehub, 'decode', '--protocol', 'qs', '--threads', '1000', fixturePath('qs', `${name}.qs`)],
      { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 },
    );
    expect(run.status, run.stderr.toString()).toBe(0);
    expect(run.stdout.equals(expectedText(name))).toBe(true);
    expect(run.stderr.toString()).toMatch(/decoding on 1 thread, not 1000: the input is too small to share out/);
  });

  it('applies the size options before target info', async () => {
    const stdout = new SlowSink();
    const stderr = new PassThrough();
    await runQsDecode(
      fixturePath('qs', 'dpp_qv_midstream.qs'),
      { format: 'text', objPtrSize: 8, funPtrSize: 8, queueCtrSize: 2 },
      { stdin: new PassThrough(), stdout, stderr },
    );
    const text = Buffer.concat(stdout.chunks).toString('latin1');
    // With the real 64-bit layout the records decode instead of reporting unused bytes.
    expect(text).not.toContain('bytes unused');
    expect(text.split('\n')[0]).toBe('1024933328 QF-gcA   Evt<Sig=00000004,Obj=0x0000000000000000,Pool=1,Ref=3>');
  });

  /** Runs the built command and returns what it wrote to stdout. */
  function commandOutput(args: string[]): Buffer {
    const tracehub = fileURLToPath(new URL('../bin/tracehub.js', import.meta.url));
    const run = spawnSync(process.execPath, [tracehub, 'decode', '-p', 'qs', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 1 << 28,
    });
    return run.stdout;
  }

  /** qspy's size options in a fixture's `.qspy-args` as the command's own. */
  const QSPY_FLAGS: Record<string, string> = { O: '--obj-ptr-size', F: '--fun-ptr-size', Q: '--queue-ctr-size' };

  for (const name of ['defer_midstream_sized', 'fmt_v64_midstream_sized']) {
    it(`prints qspy's lines for ${name}.qs with the options qspy was given`, () => {
      const args = readFileSync(fixturePath('qs', `${name}.qspy-args`), 'utf8')
        .trim()
        .split(/\s+/);
      const options = args.flatMap((a) => [QSPY_FLAGS[a[1]], a.slice(2)]);
      const out = commandOutput([...options, fixturePath('qs', `${name}.qs`)]);
      expect(out.equals(expectedText(name))).toBe(true);
    });
  }

  async function decodeFile(path: string, opts: Record<string, unknown> = {}) {
    const stdout = new SlowSink();
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const done = runQsDecode(path, { format: 'text', ...opts }, { stdin: new PassThrough(), stdout, stderr });
    return { done, stdout, stderr: () => err };
  }

  it('exits 2, naming the likely fix, when an STP capture is decoded as QS', async () => {
    const stp = fixturePath('stp', 'coresight_juno.stp');
    const run = await decodeFile(stp);
    expect(await run.done).toBe(NOTHING_DECODED_EXIT);
    expect(Buffer.concat(run.stdout.chunks).length).toBe(0);
    expect(run.stderr()).toMatch(/^qs: \d+ bytes, 0 frames/);
    expect(run.stderr()).toMatch(
      /\ntracehub: nothing decoded: no QS frame in \d+ bytes had a good checksum.*--protocol stp/,
    );
    // The built command exits with that status, as `decode --protocol stp` does for its own.
    const tracehub = fileURLToPath(new URL('../bin/tracehub.js', import.meta.url));
    const child = spawnSync(process.execPath, [tracehub, 'decode', '-p', 'qs', stp], { encoding: 'utf8' });
    expect(child.status).toBe(NOTHING_DECODED_EXIT);
    expect(child.stderr).toContain('tracehub: nothing decoded: no QS frame');
  });

  it('fails when every frame misfits its layout, and warns when most do and no target info came', async () => {
    // dpp_qv_midstream: a 64-bit target read with the 32-bit defaults.
    const run = await decodeFile(fixturePath('qs', 'dpp_qv_midstream.qs'));
    await run.done;
    expect(run.stderr()).toMatch(
      /tracehub: warning: \d+ of \d+ records did not fit their layout and no target info came.*--obj-ptr-size 8/,
    );
    // With the right sizes there is nothing to warn about.
    const sized = await decodeFile(fixturePath('qs', 'dpp_qv_midstream.qs'), {
      objPtrSize: 8,
      funPtrSize: 8,
      queueCtrSize: 2,
    });
    await sized.done;
    expect(sized.stderr()).not.toContain('warning');
  });

  it('exits 2 on an empty input, as for stp', async () => {
    const run = await decodeFile('/dev/null');
    expect(await run.done).toBe(NOTHING_DECODED_EXIT);
    expect(run.stderr()).toContain('tracehub: nothing decoded: the input is empty');
  });

  /** Streams generated and replayed through qspy 7.4 (packages/qs/test/fixtures), with its options. */
  const runsDir = fileURLToPath(new URL('../../../packages/qs/test/fixtures/', import.meta.url));
  const runs = readdirSync(runsDir)
    .filter((f) => f.endsWith('.qs'))
    .map((f) => f.slice(0, -3));

  for (const name of runs) {
    it(`writes byte for byte what qspy wrote for the generated ${name}.qs (bytes >= 0x80 included)`, () => {
      const lines = readFileSync(join(runsDir, `${name}.qspy.txt`), 'latin1').split('\n');
      const start = lines.findIndex((l) => l.includes('<COMMS> File     Opened File=')) + 1;
      const expected = Buffer.from(`${lines.slice(start, lines.lastIndexOf('QSPY Done') - 1).join('\n')}\n`, 'latin1');
      const argsPath = join(runsDir, `${name}.qspy-args`);
      const args = existsSync(argsPath) ? readFileSync(argsPath, 'utf8').trim().split(/\s+/) : [];
      const flags: Record<string, string> = {
        O: '--obj-ptr-size',
        F: '--fun-ptr-size',
        T: '--time-size',
        S: '--sig-size',
        Q: '--queue-ctr-size',
        C: '--te-ctr-size',
        v: '--qs-version',
      };
      const options = args.flatMap((a) => [flags[a[1]], a.slice(2)]);
      const out = commandOutput([...options, join(runsDir, `${name}.qs`)]);
      expect(out.equals(expected)).toBe(true);
    });
  }

  describe('with a qspy .dic file (-d, --dictionaries)', () => {
    const dicDir = fileURLToPath(new URL('./fixtures/qspy-dic/', import.meta.url));
    // qspy's lines about the file itself (README.md there): tracehub reads it before decoding.
    const aboutTheFile = /^ {3}<QSPY-> (Reading dictionaries from|Dictionaries saved to) File=/;
    const referenceLines = (name: string) => {
      const lines = readFileSync(join(dicDir, `${name}.dic.qspy.txt`), 'latin1').split('\n');
      const start = lines.findIndex((l) => l.includes('<COMMS> File     Opened File=')) + 1;
      const kept = lines.slice(start, lines.lastIndexOf('QSPY Done') - 1).filter((l) => !aboutTheFile.test(l));
      return `${kept.join('\n')}\n`;
    };
    const cases = [
      {
        name: 'dpp_qv_midstream',
        dic: 'dpp_qv.dic',
        capture: () => readFileSync(fixturePath('qs', 'dpp_qv_midstream.qs')),
      },
      {
        name: 'seq-dpp-qpc_midstream',
        dic: 'seq-dpp-qpc.dic',
        capture: () => readFileSync(fixturePath('qs8', 'seq-dpp-qpc.qs')).subarray(1633),
      },
    ];
    for (const c of cases) {
      it(`prints the lines qspy printed for ${c.name}.qs with the .dic qspy wrote (${c.dic})`, () => {
        const dir = mkdtempSync(join(tmpdir(), 'tracehub-dic-'));
        try {
          const file = join(dir, `${c.name}.qs`);
          writeFileSync(file, c.capture());
          const tracehub = fileURLToPath(new URL('../bin/tracehub.js', import.meta.url));
          for (const flag of ['-d', '--dictionaries']) {
            const run = spawnSync(
              process.execPath,
              [tracehub, 'decode', '--protocol', 'qs', flag, join(dicDir, c.dic), file],
              {
                stdio: ['ignore', 'pipe', 'pipe'],
                maxBuffer: 1 << 26,
              },
            );
            expect(run.status, run.stderr.toString()).toBe(0);
            expect(run.stdout.toString('latin1')).toBe(referenceLines(c.name));
          }
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    }

    it("writes what qspy wrote as its .dic after each capture (tracehub dict export's text), byte for byte", () => {
      for (const [dic, capture] of [
        ['dpp_qv.dic', fixturePath('qs', 'dpp_qv.qs')],
        ['seq-dpp-qpc.dic', fixturePath('qs8', 'seq-dpp-qpc.qs')],
      ] as const) {
        const decoder = new QsDecoder();
        decoder.push(new Uint8Array(readFileSync(capture)), { hostNs: 0n }, () => {});
        expect(Buffer.from(decoder.saveDictionaries(), 'latin1').equals(readFileSync(join(dicDir, dic))), dic).toBe(
          true,
        );
      }
    });

    it('says which file and line qspy would not read', () => {
      const dir = mkdtempSync(join(tmpdir(), 'tracehub-dic-'));
      try {
        const bad = join(dir, 'bad.dic');
        writeFileSync(bad, 'not a dictionary\n');
        const tracehub = fileURLToPath(new URL('../bin/tracehub.js', import.meta.url));
        const run = spawnSync(
          process.execPath,
          [tracehub, 'decode', '--protocol', 'qs', '-d', bad, fixturePath('qs', 'defer.qs')],
          {
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        expect(run.status).not.toBe(0);
        expect(run.stderr.toString()).toContain(`${bad} is not a .dic file qspy would read`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
