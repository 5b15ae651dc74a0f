// The (target record -> text line) pairs captured from qspy 7.4.0 with channels=3: each record
// fed to the target side must give exactly qspy's text datagram, or none.
import { readFileSync } from 'node:fs';
import { encodeFrame } from '@tracehub/qs';
import { fixturePath } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import { QspyFrontEnd } from '../src/front-end.js';
import { QsTargetLink } from '../src/target-link.js';
import { fromHex } from './transcript.js';

interface Pair {
  record: Uint8Array;
  text: string | null;
}

function readPairs(): Pair[] {
  const lines = readFileSync(fixturePath('qspy-udp', 'golden_record_to_text_pairs.txt'), 'latin1').split('\n');
  const pairs: Pair[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^rec=\s*\d+ bin=([0-9a-f]+)$/.exec(lines[i]);
    if (!m) continue;
    const t = /^\s+text=(.*)$/.exec(lines[++i]);
    if (!t) throw new Error(`no text line after line ${i}`);
    // Python's repr of the line: quoted, backslash-escaped.
    const text = t[1] === '(none)' ? null : t[1].slice(1, -1).replace(/\\(.)/g, '$1');
    pairs.push({ record: fromHex(m[1]), text });
  }
  return pairs;
}

describe('golden record -> text pairs', () => {
  const pairs = readPairs();

  it('has the 111 captured pairs (70 with a line, 41 without)', () => {
    expect(pairs).toHaveLength(111);
    expect(pairs.filter((p) => p.text !== null)).toHaveLength(70);
  });

  it('renders every record exactly as qspy sent it on the text channel, and nothing for the others', () => {
    const sent: Uint8Array[] = [];
    const target = new QsTargetLink({ write: () => {} });
    const frontEnd = new QspyFrontEnd({ target, send: (d) => sent.push(d) });
    frontEnd.datagram(Uint8Array.of(0, 0x80, 3), { address: '127.0.0.1', port: 40000 });
    target.targetConnected();
    let resets = 0;
    const results: { binary: string; text: string | null }[] = [];
    for (const { record } of pairs) {
      // A QUTest host target that resets exits and connects again.
      if (record[1] === 64 && record[2] !== 0 && resets++ > 0) {
        target.targetDisconnected();
        target.targetConnected();
      }
      sent.length = 0;
      target.data(encodeFrame(record[0], record[1], record.subarray(2)));
      const lines = sent.filter((d) => d[1] === 0);
      expect(lines.length).toBeLessThanOrEqual(1);
      results.push({
        binary: Buffer.from(sent[0]).toString('hex'),
        text: lines.length === 0 ? null : Buffer.from(lines[0].subarray(3)).toString('latin1'),
      });
      if (lines.length === 1) expect(lines[0][2]).toBe(record[1]);
    }
    expect(results).toEqual(pairs.map((p) => ({ binary: Buffer.from(p.record).toString('hex'), text: p.text })));
  });
});
