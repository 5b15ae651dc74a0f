import { OutputBuffer } from '@tracehub/contracts/output-buffer';
import { describe, expect, it } from 'vitest';

const text = (chunks: Uint8Array[]) => Buffer.concat(chunks).toString('utf8');

describe('OutputBuffer', () => {
  it('writes decimal, hex and text as the string forms do', () => {
    const out = new OutputBuffer();
    const values = [0, 7, 10, 99, 100, 65535, 0x7fffffff, 0x80000000, 4294967295, 1e9, 123456789012, 2 ** 53 - 1];
    for (const v of values) {
      out.uint(v);
      out.ascii(',');
    }
    expect(out.takeText()).toBe(values.map((v) => `${v},`).join(''));
    out.hexBytes(Uint8Array.of(0x00, 0x0f, 0xa0, 0xff), 1, 4);
    out.hexNibbles(Uint8Array.of(1, 10, 15), 0, 3);
    out.hex32(0xdeadbeef, 8);
    out.hex32(0xdeadbeef, 3);
    out.text(' é…');
    expect(out.takeText()).toBe('0fa0ff1AFDEADBEEFEEF é…');
  });

  it('hands full buffers out in order, lines running across them, and grows for a long line', () => {
    const chunks: Uint8Array[] = [];
    const out = new OutputBuffer((bytes) => chunks.push(bytes.slice()), 16);
    const lines: string[] = [];
    for (let i = 0; i < 50; i++) {
      const line = `line ${i} ${'x'.repeat(i % 7)}`;
      lines.push(line);
      out.ascii(line);
      out.newline();
    }
    const long = 'y'.repeat(100);
    out.ascii(long);
    out.flush();
    expect(chunks.every((c) => c.length <= 16 || c.length >= 100)).toBe(true);
    expect(text(chunks)).toBe(`${lines.join('\n')}\n${long}`);
  });

  it('fills a recycled buffer again', () => {
    const handed: Uint8Array[] = [];
    const out = new OutputBuffer((bytes) => handed.push(bytes), 8);
    out.ascii('12345678');
    out.ascii('9');
    out.recycle(handed[0]);
    out.ascii('abcdefgh');
    out.flush();
    expect(handed[2].buffer).toBe(handed[0].buffer);
  });

  it('with doneOnReturn, fills the same buffer again once the writer returns', () => {
    const written: string[] = [];
    const buffers = new Set<ArrayBufferLike>();
    const out = new OutputBuffer(
      (bytes) => {
        written.push(Buffer.from(bytes).toString('latin1'));
        buffers.add(bytes.buffer);
      },
      8,
      true,
    );
    for (let i = 0; i < 20; i++) out.ascii(`${i % 10}abc`);
    out.flush();
    expect(written.join('')).toBe(Array.from({ length: 20 }, (_, i) => `${i % 10}abc`).join(''));
    expect(written.length).toBeGreaterThan(5);
    expect(buffers.size).toBe(1);
  });
});
