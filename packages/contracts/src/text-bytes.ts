// The bytes of records' text lines as qspy and `tracehub decode` write them.

/**
 * QS text is Latin-1, one character per byte: strings from the target keep their bytes
 * 0x80..0xFF as U+0080..U+00FF, and qspy writes those bytes as they are. STP text is UTF-8.
 */
export function textEncodingOf(protocol: string): 'latin1' | 'utf8' {
  return protocol === 'qs' ? 'latin1' : 'utf8';
}

/**
 * The lines records print, as qspy and `tracehub decode` write them: every non-empty text, in
 * order (a record's text may hold several lines).
 */
export function printedLines(records: ReadonlyArray<{ text: string }>): string[] {
  return records
    .filter((r) => r.text !== '')
    .map((r) => r.text)
    .join('\n')
    .split('\n');
}

/**
 * Lines collected into one buffer at a time, each in its own encoding (a record's text in
 * `textEncodingOf(protocol)`, so a QS line written out is `cmp`-equal to `decode`'s; JSON in
 * UTF-8), without a buffer per line.
 */
export class TextLineBatch {
  private parts: Buffer[] = [];
  private run = '';
  private runEncoding: 'latin1' | 'utf8' = 'utf8';
  /** Characters held, for deciding when to take a batch. */
  length = 0;

  add(line: string, encoding: 'latin1' | 'utf8'): void {
    if (encoding !== this.runEncoding && this.run !== '') this.endRun();
    this.runEncoding = encoding;
    this.run += line;
    this.length += line.length;
  }

  /** The bytes of every line added since the last take. */
  take(): Buffer {
    this.endRun();
    const bytes = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts);
    this.parts = [];
    this.length = 0;
    return bytes;
  }

  private endRun(): void {
    if (this.run === '') return;
    this.parts.push(Buffer.from(this.run, this.runEncoding));
    this.run = '';
  }
}
