import { describe, expect, it } from 'vitest';
import { EXPORT_FORMATS, exportFormatLabel } from '../src/export-formats.js';

describe('export format labels', () => {
  it("call the text export qspy's only for QS, and name every format", () => {
    expect(exportFormatLabel('qspy', 'qs')).toBe('qspy text');
    expect(exportFormatLabel('qspy', 'stp')).toBe('text');
    expect(exportFormatLabel('qspy', 'swd')).toBe('text');
    expect(exportFormatLabel('qspy')).toBe('text');
    expect(EXPORT_FORMATS.map((f) => exportFormatLabel(f, 'stp'))).toEqual([
      'text',
      'ndjson',
      'csv',
      'raw bytes',
      'perfetto',
    ]);
  });
});
