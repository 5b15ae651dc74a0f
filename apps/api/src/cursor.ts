import { httpErrors } from '@fastify/sensible';
import type { RecordPosition, SessionPosition, SortOrder } from '@tracehub/db';

/**
 * Opaque keyset cursors: base64url of a small JSON array. Clients must treat them as opaque;
 * the server checks every part of one it gets back, so a forged or damaged cursor is a 400.
 */

const DECIMAL = /^(0|[1-9][0-9]{0,18})$/;
/** Postgres's bigint: a larger position is no position this server gave out. */
const INT8_MAX = 9_223_372_036_854_775_807n;
const fitsInt8 = (text: string) => DECIMAL.test(text) && BigInt(text) <= INT8_MAX;
/** The last microsecond of year 9999: later host times are no times this server stored. */
const MAX_MICROS = 253_402_300_799_999_999n;
const isMicros = (text: string) => DECIMAL.test(text) && BigInt(text) <= MAX_MICROS;
const SESSION = /^[^\u0000]{1,64}$/su;

export type Direction = 'after' | 'before';

export interface RecordCursor {
  order: SortOrder;
  direction: Direction;
  position: RecordPosition;
}

export function encodeRecordCursor(c: RecordCursor): string {
  const body = [
    'r1',
    c.order,
    c.direction,
    c.position.hostMicros.toString(),
    c.position.session,
    c.position.seq.toString(),
  ];
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

export function decodeRecordCursor(text: string, order: SortOrder): RecordCursor {
  const parts = decodeParts(text);
  const [tag, cursorOrder, direction, micros, session, seq] = parts;
  if (
    parts.length !== 6 ||
    tag !== 'r1' ||
    (cursorOrder !== 'asc' && cursorOrder !== 'desc') ||
    (direction !== 'after' && direction !== 'before') ||
    typeof micros !== 'string' ||
    !isMicros(micros) ||
    typeof session !== 'string' ||
    !SESSION.test(session) ||
    typeof seq !== 'string' ||
    !fitsInt8(seq)
  ) {
    throw malformed();
  }
  if (cursorOrder !== order) {
    throw httpErrors.badRequest(
      `cursor was made for order=${cursorOrder}; repeat the query with order=${cursorOrder} or without a cursor`,
    );
  }
  return { order, direction, position: { hostMicros: BigInt(micros), session, seq: BigInt(seq) } };
}

export function encodeSessionCursor(p: SessionPosition): string {
  return Buffer.from(JSON.stringify(['s1', p.startedMicros.toString(), p.id])).toString('base64url');
}

export function decodeSessionCursor(text: string): SessionPosition {
  const parts = decodeParts(text);
  const [tag, micros, id] = parts;
  if (parts.length !== 3 || tag !== 's1' || typeof micros !== 'string' || !isMicros(micros)) throw malformed();
  if (typeof id !== 'string' || !SESSION.test(id)) throw malformed();
  return { startedMicros: BigInt(micros), id };
}

function decodeParts(text: string): unknown[] {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(text)) throw malformed();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  if (!Array.isArray(parsed)) throw malformed();
  return parsed;
}

const malformed = () =>
  httpErrors.badRequest('malformed cursor: pass back the `next` or `prev` value of an earlier response unchanged');
