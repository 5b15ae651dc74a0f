import { describe, expect, it } from 'vitest';
import { linkSettingsFromText } from '../src/link-settings.js';

/** The message a wrong setting gets. */
function refusal(protocol: 'qs' | 'stp', name: string, text: string): string {
  try {
    linkSettingsFromText(protocol, [[name, text]]);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${name}=${text} was taken`);
}

describe('a wrong link setting', () => {
  it('is one sentence naming the setting and what it accepts', () => {
    expect(refusal('qs', 'objPtrSize', '3')).toBe(
      'qs link setting objPtrSize must be 1, 2, 4 or 8: object pointer size in bytes until the target info says otherwise (qspy -O)',
    );
    expect(refusal('stp', 'output', 'x')).toBe(
      'stp link setting output must be ost or phonet: output protocol (default ost)',
    );
    expect(refusal('stp', 'port', '300')).toMatch(/^stp link setting port must be a whole number from 0 to 255: /);
    expect(refusal('stp', 'littleEndianMasters', '70000')).toMatch(
      /^stp link setting littleEndianMasters must be a list of at most 256 values, each a whole number from 0 to 65535: /,
    );
  });
});
