import { RequestError, type Subscription, TimeoutError } from '@nats-io/transport-node';
import type { ControlReply, ControlRequest, LinkConnectionState, LinkMarker } from '@tracehub/contracts';
import type { Bus } from './types.js';

/** The most bytes one control request may carry (a QS-RX frame is far smaller). */
export const MAX_CONTROL_BYTES = 64 * 1024;

/** Where a control request goes: the link's gateway listens on `ctl.<rig>.<link>`. */
export interface ControlTarget {
  rig: string;
  link: string;
}

/** Nothing serves the link's control subject: no gateway owns the link now. */
export class NoGatewayError extends Error {
  override name = 'NoGatewayError';
  constructor(readonly target: ControlTarget) {
    super(`no gateway serves link ${target.rig}/${target.link} (nothing answers on its control subject)`);
  }
}

/** A gateway owns the link but did not answer in time. */
export class ControlTimeoutError extends Error {
  override name = 'ControlTimeoutError';
  constructor(
    readonly target: ControlTarget,
    readonly timeoutMs: number,
  ) {
    super(`the gateway of link ${target.rig}/${target.link} did not answer within ${timeoutMs} ms`);
  }
}

/** The most data one upload carries in a control request (NATS carries 1 MiB a message by default). */
export const MAX_UPLOAD_BYTES = 512 * 1024;

/** The longest a QS-RX command may wait for the target's answer, ms. */
export const MAX_ANSWER_TIMEOUT_MS = 60_000;

/** A QS-RX command as the contract carries it (`@tracehub/qspy-frontend` QsCommand). */
export type ControlQsCommand = NonNullable<ControlRequest['qs']>;
/** Pointer and signal sizes for a QS-RX command while the target has not said its own. */
export type ControlQsSizes = NonNullable<ControlRequest['sizes']>;

/**
 * What a control request asks: bytes to write to the target, a new link session (with why),
 * a QS-RX command with the target's answer, the link's control state, that its front-end
 * port be freed, or how the link is connected.
 */
export type ControlAsk =
  | { bytes: Uint8Array; replyWindowMs?: number }
  | { newSession: string }
  | { qs: ControlQsCommand; answerTimeoutMs?: number; sizes?: ControlQsSizes }
  | { status: true }
  | { releaseFrontEnd: true }
  | { connection: true }
  | { marker: LinkMarker }
  | { upload: Uint8Array };

/**
 * Asks the gateway that owns a link to act on it (see `ControlAsk`), and returns the gateway's
 * reply (which says `ok: false` and why when it could not). Throws `NoGatewayError` when no
 * gateway serves the link and `ControlTimeoutError` when its gateway does not answer in time.
 */
export async function requestControl(
  bus: Bus,
  target: ControlTarget,
  request: ControlAsk,
  timeoutMs: number,
): Promise<ControlReply> {
  const payload: ControlRequest =
    'bytes' in request
      ? { ...request, bytes: Buffer.from(request.bytes).toString('base64') }
      : 'upload' in request
        ? { upload: Buffer.from(request.upload).toString('base64') }
        : request;
  try {
    const msg = await bus.nc.request(bus.names.ctlSubject(target.rig, target.link), JSON.stringify(payload), {
      timeout: timeoutMs,
    });
    return msg.json<ControlReply>();
  } catch (err) {
    if (err instanceof RequestError && err.isNoResponders()) throw new NoGatewayError(target);
    if (err instanceof TimeoutError || (err instanceof RequestError && err.cause instanceof TimeoutError))
      throw new ControlTimeoutError(target, timeoutMs);
    throw err;
  }
}

/** A control request as the gateway gets it: checked, its bytes decoded. */
export interface ControlWrite {
  bytes: Uint8Array;
  replyWindowMs: number;
}

/** A QS-RX command as the gateway gets it: checked, its answer timeout within bounds. */
export interface ControlQs {
  qs: ControlQsCommand;
  answerTimeoutMs: number;
  sizes: ControlQsSizes | undefined;
}

/** The link's control state, and the session it is in. */
export interface ControlState {
  session?: string;
  status: Record<string, unknown>;
}

/**
 * Refuses a control request for a bad value of one field: the reply names the field (`field`)
 * so that the asker can say which of its own inputs was at fault.
 */
export interface ControlFieldError extends Error {
  field: string;
}

/** What the owner of a link does with its control requests; a missing handler refuses its kind. */
export interface ControlHandlers {
  /** Writes the bytes to the target; resolves to how many were written and into which session. */
  write(request: ControlWrite): Promise<Omit<ControlReply, 'ok'>>;
  /** Ends the link's session and starts a new one on the same connection; resolves to its id. */
  newSession?(reason: string): Promise<string>;
  /** Sends a QS-RX command and resolves to the target's answer (`ok: false` when it refused). */
  qs?(request: ControlQs): Promise<ControlReply>;
  /** The link's control state. */
  status?(): Promise<ControlState>;
  /** Frees the link's front-end port; resolves to the control state after. */
  releaseFrontEnd?(): Promise<ControlState>;
  /** How the link is connected: its source, the target and since when, connections not taken. */
  connection?(): Promise<{ session?: string; connection: LinkConnectionState }>;
  /** Sets a marker after every byte read so far; resolves to the session it is in. */
  marker?(marker: LinkMarker): Promise<string>;
  /** Uploads data to the device (STP links' UART upload); the reply's `result` is the outcome. */
  upload?(data: Uint8Array): Promise<ControlReply>;
}

export interface ControlServer {
  stop(): void;
}

const NO_QS_POINT = 'this link has no QS control point (it is not a QS link)';

/**
 * Answers the control requests of one link: checks each request (JSON; `newSession`,
 * `releaseFrontEnd`, `status`, `connection`, `qs`, or base64 `bytes` of 1..MAX_CONTROL_BYTES) and answers a
 * bad one itself, hands a good one to its handler, and replies with what the handler resolves
 * to; a rejection becomes `{ ok: false, written: 0, error: <its message> }`, with the `field`
 * at fault when the error names one.
 */
export function serveControl(bus: Bus, target: ControlTarget, handlers: ControlHandlers): ControlServer {
  const sub: Subscription = bus.nc.subscribe(bus.names.ctlSubject(target.rig, target.link), {
    callback: (err, msg) => {
      if (err) return;
      const reply = (r: ControlReply) => msg.respond(JSON.stringify(r));
      const refuse = (error: string, field?: string) =>
        reply({ ok: false, written: 0, error, ...(field ? { field } : {}) });
      let request: ControlRequest;
      try {
        request = msg.json<ControlRequest>();
      } catch {
        refuse('request is not JSON: send {"bytes": "<base64>"}');
        return;
      }
      const failed = (e: unknown) => {
        const field = (e as Partial<ControlFieldError> | undefined)?.field;
        refuse(e instanceof Error ? e.message : `${e}`, typeof field === 'string' ? field : undefined);
      };
      const state = (s: ControlState) => reply({ ok: true, written: 0, ...s });
      if (typeof request?.newSession === 'string') {
        if (!handlers.newSession) refuse('this link cannot start a new session');
        else
          handlers.newSession(request.newSession).then((session) => reply({ ok: true, written: 0, session }), failed);
        return;
      }
      if (request?.releaseFrontEnd === true) {
        if (!handlers.releaseFrontEnd) refuse(NO_QS_POINT);
        else handlers.releaseFrontEnd().then(state, failed);
        return;
      }
      if (request?.status === true) {
        if (!handlers.status) refuse(NO_QS_POINT);
        else handlers.status().then(state, failed);
        return;
      }
      if (request?.connection === true) {
        if (!handlers.connection) refuse('this link cannot say how it is connected');
        else handlers.connection().then((c) => reply({ ok: true, written: 0, ...c }), failed);
        return;
      }
      if (request?.marker !== undefined) {
        const marker = checkedMarker(request.marker);
        if (!handlers.marker) refuse('this link cannot take markers');
        else if (typeof marker === 'string') refuse(marker, 'marker');
        else handlers.marker(marker).then((session) => reply({ ok: true, written: 0, session }), failed);
        return;
      }
      if (request?.upload !== undefined) {
        const data = typeof request.upload === 'string' ? Buffer.from(request.upload, 'base64') : undefined;
        if (!handlers.upload) refuse('this link takes no upload (the UART upload is for STP links)');
        else if (!data || data.length === 0 || data.length > MAX_UPLOAD_BYTES)
          refuse(`upload must be base64 of 1..${MAX_UPLOAD_BYTES} bytes`, 'upload');
        else handlers.upload(data).then(reply, failed);
        return;
      }
      if (request?.qs !== undefined) {
        if (!handlers.qs) refuse(NO_QS_POINT);
        else if (typeof request.qs?.command !== 'string') refuse('"qs" has no "command" (string)');
        else {
          const answerTimeoutMs = Math.min(
            Math.max(Number(request.answerTimeoutMs ?? 1000) || 0, 0),
            MAX_ANSWER_TIMEOUT_MS,
          );
          const sizes = typeof request.sizes === 'object' && request.sizes !== null ? request.sizes : undefined;
          handlers.qs({ qs: request.qs, answerTimeoutMs, sizes }).then(reply, failed);
        }
        return;
      }
      if (typeof request?.bytes !== 'string') {
        refuse('request has no "bytes" (base64 string)');
        return;
      }
      const bytes = Buffer.from(request.bytes, 'base64');
      if (bytes.length === 0 || bytes.length > MAX_CONTROL_BYTES) {
        refuse(`bytes must be 1..${MAX_CONTROL_BYTES} long`);
        return;
      }
      const replyWindowMs = typeof request.replyWindowMs === 'number' ? request.replyWindowMs : 0;
      handlers.write({ bytes, replyWindowMs }).then((done) => reply({ ok: true, ...done }), failed);
    },
  });
  return { stop: () => sub.unsubscribe() };
}

/** The longest marker comment, UTF-16 units (a marker is one trace box message). */
export const MAX_MARKER_COMMENT = 1024;

/** A marker request checked: the marker, or what is wrong with it. */
function checkedMarker(m: unknown): LinkMarker | string {
  const marker = m as Record<string, unknown> | null;
  if (marker?.kind === 'user') {
    if (marker.comment === undefined) return { kind: 'user' };
    if (
      typeof marker.comment !== 'string' ||
      marker.comment.length > MAX_MARKER_COMMENT ||
      marker.comment.includes('\0')
    )
      return `a marker comment is a string of at most ${MAX_MARKER_COMMENT} characters without NUL`;
    return { kind: 'user', comment: marker.comment };
  }
  if (marker?.kind === 'timeBase') {
    if (typeof marker.offsetNs !== 'string' || !/^-?[0-9]{1,18}$/.test(marker.offsetNs))
      return 'a time base needs offsetNs: an integer number of ns as a decimal string (at most 18 digits)';
    return { kind: 'timeBase', offsetNs: marker.offsetNs };
  }
  return 'a marker is {"kind": "user", "comment"?: string} or {"kind": "timeBase", "offsetNs": "<ns>"}';
}
