/**
 * Decodes one stream once, fully, with the text of every record, and prints what it decoded:
 * the workload for counting instructions, which on a shared machine compare builds where times
 * do not. Identical runs count the same to a few hundred instructions in five billion:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
 *     node --single-threaded --predictable dist/bench/decode-once.js big|fixtures
 *
 * `big` is shared/bench/qs/big_stress.qs.gz once (37 MB); `fixtures` the captures of
 * shared/fixtures/qs one after the other, repeated to 20 MB.
 */
import { QsDecoder } from '../decoder.js';
import { bigStress, fixtureCaptures, RecordTally } from './bench-streams.js';

const CHUNK = 64 * 1024;
const FIXTURES_BYTES = 20e6;

function stream(which: string): { bytes: Uint8Array; repeats: number } {
  if (which === 'big') return { bytes: bigStress(), repeats: 1 };
  if (which === 'fixtures') {
    const bytes = fixtureCaptures();
    return { bytes, repeats: Math.ceil(FIXTURES_BYTES / bytes.length) };
  }
  throw new Error(`unknown stream '${which}': use big or fixtures`);
}

const which = process.argv[2] ?? 'big';
const { bytes, repeats } = stream(which);
const decoder = new QsDecoder();
const tally = new RecordTally();
const ctx = { hostNs: 0n };
for (let rep = 0; rep < repeats; rep++) {
  for (let off = 0; off < bytes.length; off += CHUNK) decoder.push(bytes.subarray(off, off + CHUNK), ctx, tally.emit);
}
process.stdout.write(
  `${which}: ${bytes.length * repeats} bytes, ${tally.records} records, ${tally.textChars} text characters\n`,
);
