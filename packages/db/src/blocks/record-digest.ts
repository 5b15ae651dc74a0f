import type { RecordsDigest } from '@tracehub/contracts';
import { packColumn, unpackColumn } from './packed-column.js';

/** A block's digest as stored (`record_blocks.digest`): its JSON, packed (`packed-column.ts`). */
export function encodeStoredDigest(digest: RecordsDigest): Buffer {
  return packColumn(Buffer.from(JSON.stringify(digest)));
}

/** The digest of `encodeStoredDigest`'s bytes. */
export function decodeStoredDigest(stored: Uint8Array): RecordsDigest {
  return JSON.parse(unpackColumn(stored).toString('utf8')) as RecordsDigest;
}
