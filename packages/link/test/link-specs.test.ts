import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';
import { parseLinkSpecs } from '../src/index.js';

const DIC = join(repoRoot, 'apps/cli/test/fixtures/qspy-dic/dpp_qv.dic');

describe('link settings in a link address', () => {
  it('reads a qs dictionaries setting of one line as the path of a .dic file', () => {
    const [spec] = parseLinkSpecs(`qs/rigA/uart0=tcp-listen:127.0.0.1:0?objPtrSize=8&dictionaries=${DIC}`);
    expect(spec.address).toBe('tcp-listen:127.0.0.1:0');
    expect(spec.settings).toEqual({ objPtrSize: 8, dictionaries: readFileSync(DIC, 'latin1') });
  });

  it('says which setting names a file that cannot be read', () => {
    const missing = fileURLToPath(new URL('./no-such.dic', import.meta.url));
    expect(() => parseLinkSpecs(`qs/rigA/uart0=tcp-listen:127.0.0.1:0?dictionaries=${missing}`)).toThrow(
      /qs link setting dictionaries: '.*no-such\.dic' is neither a \.dic file's text nor a file that can be read/,
    );
  });
});
