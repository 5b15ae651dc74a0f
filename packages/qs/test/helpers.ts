import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DecodedRecord } from '@tracehub/contracts';
import { QSPY_SIZE_OPTIONS, QsDecoder, type QsDecoderOptions } from '@tracehub/qs';
import { fixturePath, qspyLines } from '@tracehub/tests/support';

export const FIXTURE_NAMES: string[] = readdirSync(fixturePath('qs'))
  .filter((f) => f.endsWith('.qs'))
  .map((f) => f.slice(0, -3))
  .sort();

export function captureBytes(name: string): Uint8Array {
  return new Uint8Array(readFileSync(fixturePath('qs', `${name}.qs`)));
}

/** qspy's size and version options (`-O8 -F8 -Q2`, `-v6.0`) as decoder options. */
export function optionsFromQspyArgs(args: string): QsDecoderOptions {
  const keys: Readonly<Record<string, keyof QsDecoderOptions>> = QSPY_SIZE_OPTIONS;

  const options: QsDecoderOptions = {};
  for (const arg of args.trim().split(/\s+/).filter(Boolean)) {
    const flag = arg[1];
    const value = arg.slice(2);
    if (flag === 'v') {
      const [major, minor = '0', patch = '0'] = value.split('.');
      options.version = Number(major) * 100 + Number(minor) * 10 + Number(patch);
    } else if (keys[flag]) (options as Record<string, number>)[keys[flag]] = Number(value);
    else throw new Error(`unknown qspy option ${arg}`);
  }
  return options;
}

/** The qspy options a shared fixture was replayed with (its `.qspy-args`), as decoder options. */
export function fixtureOptions(name: string): QsDecoderOptions {
  const path = join(fixturePath('qs'), `${name}.qspy-args`);
  return existsSync(path) ? optionsFromQspyArgs(readFileSync(path, 'utf8')) : {};
}

/**
 * Captures made here by running qspy 7.4 on generated streams (random records of every id,
 * with bit flips or garbage between frames, several option sets): `<name>.qs`, qspy's output
 * `<name>.qspy.txt`, and its options in `<name>.qspy-args`.
 */
export const qspyRunsDir = fileURLToPath(new URL('./fixtures/', import.meta.url));
export const QSPY_RUN_NAMES: string[] = readdirSync(qspyRunsDir)
  .filter((f) => f.endsWith('.qs'))
  .map((f) => f.slice(0, -3))
  .sort();

export function qspyRun(name: string): { bytes: Uint8Array; options: QsDecoderOptions; lines: string[] } {
  const argsPath = join(qspyRunsDir, `${name}.qspy-args`);
  const lines = readFileSync(join(qspyRunsDir, `${name}.qspy.txt`), 'latin1').split('\n');
  // The header ends with the "Opened File" line; the output ends with an empty line and "QSPY Done".
  const start = lines.findIndex((l) => l.includes('<COMMS> File     Opened File=')) + 1;
  const end = lines.lastIndexOf('QSPY Done') - 1;
  return {
    bytes: new Uint8Array(readFileSync(join(qspyRunsDir, `${name}.qs`))),
    options: existsSync(argsPath) ? optionsFromQspyArgs(readFileSync(argsPath, 'utf8')) : {},
    lines: lines.slice(start, end),
  };
}

/** A stream with the lines qspy printed for it and the options it was given. */
export interface QspyCase {
  /** `dpp_qv.qs`, or `the generated random_latin1.qs` for the streams made here. */
  label: string;
  bytes: Uint8Array;
  options: QsDecoderOptions;
  lines: string[];
  /** Made here (packages/qs/test/fixtures) rather than captured from a target. */
  generated: boolean;
}

/** The shared captures of QP 8.x targets (`shared/fixtures/qs8`), printed by qspy 8.1.3's parser. */
export const QS8_FIXTURE_NAMES: string[] = readdirSync(fixturePath('qs8'))
  .filter((f) => f.endsWith('.qs'))
  .map((f) => f.slice(0, -3))
  .sort();

/** A QP 8.x capture with qspy 8.1.3's lines for it (its header and closing lines dropped). */
function qs8Capture(name: string): QspyCase {
  const lines = readFileSync(fixturePath('qs8', `${name}.qspy.txt`), 'latin1').split('\n');
  const start = lines.findIndex((l) => l.includes('<COMMS> File     Opened File=')) + 1;
  return {
    label: `qs8/${name}.qs`,
    bytes: new Uint8Array(readFileSync(fixturePath('qs8', `${name}.qs`))),
    options: {},
    lines: lines.slice(start, lines.lastIndexOf('QSPY Done') - 1),
    generated: false,
  };
}

/**
 * Every stream qspy's output is known for: the shared fixtures (QP 7.4 and QP 8.x targets), then
 * the generated streams (those of QP 8.x targets, `qs8_*`, replayed through qspy 8.1.3).
 */
export function qspyCases(): QspyCase[] {
  return [
    ...FIXTURE_NAMES.map((name) => ({
      label: `${name}.qs`,
      bytes: captureBytes(name),
      options: fixtureOptions(name),
      lines: qspyLines(name),
      generated: false,
    })),
    ...QS8_FIXTURE_NAMES.map(qs8Capture),
    ...QSPY_RUN_NAMES.map((name) => ({ label: `the generated ${name}.qs`, ...qspyRun(name), generated: true })),
  ];
}

const ctx = { hostNs: 0n };

/** Decodes `bytes` cut into chunks of the given sizes (cycled), then ends the stream. */
export function decodeChunked(bytes: Uint8Array, sizes: number[], options?: QsDecoderOptions): DecodedRecord[] {
  const decoder = new QsDecoder(options);
  const out: DecodedRecord[] = [];
  const emit = (r: DecodedRecord) => out.push(r);
  let off = 0;
  let i = 0;
  while (off < bytes.length) {
    const n = sizes[i++ % sizes.length];
    decoder.push(bytes.subarray(off, off + n), ctx, emit);
    off += n;
  }
  decoder.end(ctx, emit);
  return out;
}

/** The text output: non-empty texts joined, split into lines. */
export { printedLines as textLines } from '@tracehub/contracts';
