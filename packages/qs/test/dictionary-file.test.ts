import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DecodedRecord } from '@tracehub/contracts';
import { DictionaryFileError, parseDictionaryFile, QsDecoder, QsFrameBuilder, QsPayloadWriter } from '@tracehub/qs';
import { fixturesDir } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import { captureBytes } from './helpers.js';

// The .dic qspy 7.4.0 wrote with -d for the test_philo build 261123_180225 (64-bit host target).
const DIC_PATH = join(fixturesDir, 'qspy-udp', 'qspy_cwd', 'qspy261123_180225.dic');
const dicText = readFileSync(DIC_PATH, 'latin1');
const ctx = { hostNs: 1n };

/** A state-entry record of the 8-byte-pointer build the .dic describes: Obj, then State. */
function stateEntry(b: QsFrameBuilder, obj: number, fun: number): Uint8Array {
  return b.frame(1, new QsPayloadWriter().uint(obj, 8).uint(fun, 8).toBytes());
}

function targetInfo(reset: boolean, build: number[]): Uint8Array {
  // 7.4.0, sig 2 / evt 2, queue 1 / te 4, blk 2 / pool 2, obj 8 / fun 8, time 4.
  return new QsPayloadWriter()
    .u8(reset ? 0xff : 0)
    .u16(740)
    .raw([0x22, 0x41, 0x22, 0x88, 0x04, 16, 0x13, ...build])
    .toBytes();
}

const BUILD_OF_DIC = [25, 2, 18, 23, 11, 26]; // 261123_180225: second, minute, hour, day, month, year
const decode = (d: QsDecoder, bytes: Uint8Array) => {
  const out: DecodedRecord[] = [];
  d.push(bytes, ctx, (r) => out.push(r));
  return out;
};

describe('qspy .dic files', () => {
  it("reads qspy's file and writes it back byte for byte", () => {
    const file = parseDictionaryFile(dicText);
    expect(file.config).toMatchObject({ version: 740, objPtrSize: 8, funPtrSize: 8, timeSize: 4, sigSize: 2 });
    expect(file.config.build).toEqual(BUILD_OF_DIC);
    expect(file.obj).toContainEqual([0x0040e190, 'Philo_inst[2]']);
    expect(file.sig).toContainEqual({ sig: 10, obj: 0, name: 'TIMEOUT_SIG' }); // qspy writes signals in decimal
    // qspy started with its default sizes: the dictionaries' key sizes are 4, whatever the target's.
    expect(new QsDecoder({}, file).saveDictionaries()).toBe(dicText);
  });

  it('names a target joined mid-run from the file, and again after a reset of the same build', () => {
    const file = parseDictionaryFile(dicText);
    const b = new QsFrameBuilder();
    const entry = () => stateEntry(b, 0x0040e190, 0x0040158d);
    // Without the file: the default sizes misread the record; with it, names at once.
    expect(decode(new QsDecoder(), entry()).at(-1)?.text).not.toContain('Philo_inst[2]');
    const d = new QsDecoder({}, file);
    expect(decode(d, entry()).at(-1)?.text).toContain('St-Entry Obj=Philo_inst[2],State=Philo_eating');
    // A reset of the same build empties the dictionaries, and the file fills them again.
    const afterReset = decode(d, Buffer.concat([b.frame(64, targetInfo(true, BUILD_OF_DIC)), entry()]));
    expect(afterReset.at(-1)?.text).toContain('St-Entry Obj=Philo_inst[2],State=Philo_eating');
    // Another build: the file does not match, the names are gone (qspy: "mismatch ... discarded").
    const other = decode(d, Buffer.concat([b.frame(64, targetInfo(true, [0, 0, 0, 1, 1, 26])), entry()]));
    expect(other.at(-1)?.text).toContain('St-Entry Obj=0x0040E190,State=0x0040158D');
  });

  it('says which line qspy would not read', () => {
    expect(() => parseDictionaryFile('-v740\n-X9\n')).toThrow(DictionaryFileError);
    expect(() => parseDictionaryFile('-v740\n-X9\n')).toThrow(/line 2: '-X9' is not an option/);
    expect(() => parseDictionaryFile('Obj-Dic:\n4\n0x12 short\n***\n')).toThrow(
      /line 3: expected '0x<8 hex digits> <name>'/,
    );
    expect(() => parseDictionaryFile('Fun-Dic:\nfour\n')).toThrow(/line 2: a dictionary must start with its key size/);
    expect(() => parseDictionaryFile('hello\n')).toThrow(/line 1: 'hello' is not an option or a dictionary heading/);
  });
});

describe('a session that continues the previous one', () => {
  it('keeps the names and the configuration until the target resets', () => {
    const first = new QsDecoder();
    const records = decode(first, captureBytes('dpp_qv'));
    const named = records.filter((r) => r.kind === 'record' && r.qs?.obj && !r.qs.obj.startsWith('0x'));
    expect(named.length).toBeGreaterThan(0);
    const next = QsDecoder.continueFrom(first.snapshot());
    // The same frames again in a new session, without the dictionary records: still named.
    const raws = records.filter((r) => r.kind === 'record' && r.raw.length > 0);
    const b = new QsFrameBuilder();
    const again = decode(next, Buffer.concat(raws.map((r) => b.frame(r.raw[1] as number, r.raw.subarray(2, -1)))));
    const sample = again.find((r) => r.type === named[0]?.type && r.qs?.obj === named[0]?.qs?.obj);
    expect(sample?.qs?.obj).toBe(named[0]?.qs?.obj);
    // A fresh decoder of the same frames knows none of the names.
    const b2 = new QsFrameBuilder();
    const fresh = decode(
      new QsDecoder(first.config),
      Buffer.concat(raws.map((r) => b2.frame(r.raw[1] as number, r.raw.subarray(2, -1)))),
    );
    expect(fresh.some((r) => r.qs?.obj === named[0]?.qs?.obj)).toBe(false);
  });
});
