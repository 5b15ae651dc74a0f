import type { PubAck } from '@nats-io/jetstream';
import { type MsgHdrs, headers as natsHeaders } from '@nats-io/transport-node';
import {
  type ChunkSegment,
  Headers,
  type LinkAddress,
  type LinkMarker,
  msgId,
  type RawChunkMeta,
} from '@tracehub/contracts';
import { jetStreamPublish } from './js-publish.js';
import type { Bus } from './types.js';

export interface RawChunk extends RawChunkMeta {
  data: Uint8Array;
}

/**
 * Publishes one raw chunk with the headers of the bus contract and waits for the JetStream
 * ack. A re-send of the same `<session>.<chunk>` inside the duplicate window is dropped by
 * the server (the ack then says `duplicate`).
 */
export async function publishRawChunk(bus: Bus, link: LinkAddress, chunk: RawChunk): Promise<PubAck> {
  const h = natsHeaders();
  h.set(Headers.Session, chunk.session);
  h.set(Headers.Chunk, String(chunk.chunk));
  h.set(Headers.RecvNs, chunk.recvNs.toString());
  if (chunk.lost > 0) h.set(Headers.Lost, String(chunk.lost));
  if (chunk.eos) h.set(Headers.Eos, '1');
  if (chunk.capture) h.set(Headers.Capture, '1');
  if (chunk.pauseNs !== undefined) h.set(Headers.PauseNs, chunk.pauseNs.toString());
  if (chunk.segments && chunk.segments.length > 1)
    h.set(Headers.Segments, chunk.segments.map((s) => `${s.offset}:${s.pauseNs}:${s.recvNs}`).join(','));
  if (chunk.settings && Object.keys(chunk.settings).length > 0) h.set(Headers.Settings, JSON.stringify(chunk.settings));
  if (chunk.marker) h.set(Headers.Marker, JSON.stringify(chunk.marker));
  h.set(Headers.MsgId, msgId(chunk.session, chunk.chunk));
  return jetStreamPublish(bus.nc, bus.names.rawSubject(link.protocol, link.rig, link.link), chunk.data, h);
}

export class BadChunkHeadersError extends Error {
  override name = 'BadChunkHeadersError';
}

/** Reads the headers of a raw chunk; throws `BadChunkHeadersError` saying which one is wrong. */
export function readRawChunkMeta(h: MsgHdrs | undefined): RawChunkMeta {
  if (!h) throw new BadChunkHeadersError('raw chunk has no headers');
  const session = h.get(Headers.Session);
  if (!session) throw new BadChunkHeadersError(`raw chunk has no ${Headers.Session} header`);
  const chunkText = h.get(Headers.Chunk);
  const chunk = Number(chunkText);
  if (!/^[0-9]+$/.test(chunkText) || !Number.isSafeInteger(chunk)) {
    throw new BadChunkHeadersError(`raw chunk has a bad ${Headers.Chunk} header: '${chunkText}'`);
  }
  const recvText = h.get(Headers.RecvNs);
  if (!/^[0-9]{1,20}$/.test(recvText)) {
    throw new BadChunkHeadersError(`raw chunk has a bad ${Headers.RecvNs} header: '${recvText}'`);
  }
  const lostText = h.get(Headers.Lost);
  const lost = lostText ? Number(lostText) : 0;
  if (!Number.isSafeInteger(lost) || lost < 0) {
    throw new BadChunkHeadersError(`raw chunk has a bad ${Headers.Lost} header: '${lostText}'`);
  }
  const meta: RawChunkMeta = { session, chunk, recvNs: BigInt(recvText), lost, eos: h.has(Headers.Eos) };
  if (h.has(Headers.Capture)) meta.capture = true;
  const pauseText = h.get(Headers.PauseNs);
  if (pauseText) {
    if (!/^[0-9]{1,20}$/.test(pauseText)) {
      throw new BadChunkHeadersError(`raw chunk has a bad ${Headers.PauseNs} header: '${pauseText}'`);
    }
    meta.pauseNs = BigInt(pauseText);
  }
  const segmentsText = h.get(Headers.Segments);
  if (segmentsText) meta.segments = readSegments(segmentsText);
  const settingsText = h.get(Headers.Settings);
  if (settingsText) {
    let settings: unknown;
    try {
      settings = JSON.parse(settingsText);
    } catch {
      settings = undefined;
    }
    if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) {
      throw new BadChunkHeadersError(`raw chunk has a bad ${Headers.Settings} header: '${settingsText}'`);
    }
    meta.settings = settings as Record<string, unknown>;
  }
  const markerText = h.get(Headers.Marker);
  if (markerText) meta.marker = readMarker(markerText);
  return meta;
}

/** `th-marker`: a user marker (comment optional) or a time base (offset in ns, decimal). */
function readMarker(text: string): LinkMarker {
  let marker: unknown;
  try {
    marker = JSON.parse(text);
  } catch {
    marker = undefined;
  }
  const m = marker as Record<string, unknown> | undefined;
  if (m?.kind === 'user' && (m.comment === undefined || typeof m.comment === 'string'))
    return m.comment === undefined ? { kind: 'user' } : { kind: 'user', comment: m.comment };
  if (m?.kind === 'timeBase' && typeof m.offsetNs === 'string' && /^-?[0-9]{1,19}$/.test(m.offsetNs))
    return { kind: 'timeBase', offsetNs: m.offsetNs };
  throw new BadChunkHeadersError(`raw chunk has a bad ${Headers.Marker} header: '${text}'`);
}

const SEGMENT = /^([0-9]{1,10}):([0-9]{1,20}):([0-9]{1,20})$/;

/** `th-segments`: stretches at increasing offsets, the first at 0. */
function readSegments(text: string): ChunkSegment[] {
  const segments: ChunkSegment[] = [];
  for (const entry of text.split(',')) {
    const m = SEGMENT.exec(entry);
    const offset = m ? Number(m[1]) : Number.NaN;
    const previous = segments.at(-1);
    if (!m || (previous ? offset <= previous.offset : offset !== 0))
      throw new BadChunkHeadersError(`raw chunk has a bad ${Headers.Segments} header: '${text}'`);
    segments.push({ offset, pauseNs: BigInt(m[2]), recvNs: BigInt(m[3]) });
  }
  return segments;
}
