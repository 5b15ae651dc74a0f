import { describe, expect, it } from 'vitest';
import {
  decodeText,
  decodeWindows1252,
  encodeText,
  encodeTraceMessage,
  encodeWindows1252,
  type PalmTraceMessage,
  PalmTraceParser,
  WINDOWS_1252_TO_UNICODE,
} from '../src/index.js';
import { hex } from './helpers.js';

describe('Windows-1252 by hand', () => {
  it('decodes every byte as the published code page says', () => {
    // Typed from the code page chart; 81 8D 8F 90 9D are unassigned and map to C1 controls
    // (WHATWG). The platform's TextDecoder is no reference: some Node releases decode
    // 'windows-1252' as Latin-1.
    const high = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';
    for (let byte = 0; byte < 256; byte++) {
      const expected = byte >= 0x80 && byte < 0xa0 ? high[byte - 0x80] : String.fromCharCode(byte);
      expect(String.fromCharCode(WINDOWS_1252_TO_UNICODE[byte]), `byte ${byte}`).toBe(expected);
    }
    expect(decodeWindows1252(Uint8Array.of(0x80, 0x41, 0x99, 0xe9))).toBe('€A™é');
  });

  it('encodes the 0x80–0x9F specials to the code page bytes', () => {
    // Code page 1252 as published: € ‚ ƒ „ … † ‡ ˆ ‰ Š ‹ Œ Ž ‘ ’ “ ” • – — ˜ ™ š › œ ž Ÿ
    expect(encodeWindows1252('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ')).toEqual(
      hex('80 82 83 84 85 86 87 88 89 8A 8B 8C 8E 91 92 93 94 95 96 97 98 99 9A 9B 9C 9E 9F'),
    );
    expect(encodeWindows1252('Café ±½ÿ')).toEqual(hex('43 61 66 E9 20 B1 BD FF'));
  });

  it('writes one ? per unmappable code point (a surrogate pair is one)', () => {
    expect(encodeWindows1252('a→b😀c\u0080')).toEqual(hex('61 3F 62 3F 63 3F'));
    expect(encodeWindows1252('\ud800x')).toEqual(hex('3F 78'));
    expect(encodeText('Ω', 'latin1')).toEqual(hex('3F'));
    expect(encodeText('Ω', 'utf-8')).toEqual(hex('CE A9'));
  });

  it('every byte decodes and encodes back to itself', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(encodeWindows1252(decodeWindows1252(all))).toEqual(all);
    expect(decodeText(encodeText('“quoted” – 5 €', 'utf-8'), 'utf-8')).toBe('“quoted” – 5 €');
  });

  it('text with Windows-1252 characters survives encode → parse', () => {
    const text = 'Grüße – “Zürich” costs 5 € … ™';
    const bytes = encodeTraceMessage({ text });
    // Attributes + Trace Data of one byte per character.
    expect(bytes.length).toBe(6 + 8 + 3 + text.length + 3);
    const seen: PalmTraceMessage[] = [];
    new PalmTraceParser().push(bytes, (event) => event.type === 'message' && seen.push(event.message));
    expect(seen.map((message) => message.text)).toEqual([text]);
  });

  it('a parser set to UTF-8 reads UTF-8 text', () => {
    const seen: PalmTraceMessage[] = [];
    new PalmTraceParser({ textEncoding: 'utf-8' }).push(
      encodeTraceMessage({ text: 'Ω ≈ 1 😀', encoding: 'utf-8' }),
      (event) => event.type === 'message' && seen.push(event.message),
    );
    expect(seen[0].text).toBe('Ω ≈ 1 😀');
  });
});
