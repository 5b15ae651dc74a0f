import { RequestError, type Subscription, TimeoutError } from '@nats-io/transport-node';
import type { ControlReply, ControlRequest } from '@tracehub/contracts';
import type { Bus } from './connect.js';

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

/** What a control request asks: bytes to write to the target, or a new link session (with why). */
export type ControlAsk = { bytes: Uint8Array; replyWindowMs?: number } | { newSession: string };

/**
 * Asks the gateway that owns a link to write bytes to its target, and returns the gateway's
 * reply (which says `ok: false` and why when the write failed). Throws `NoGatewayError` when
 * no gateway serves the link and `ControlTimeoutError` when its gateway does not answer in time.
 */
export async function requestControl(
  bus: Bus,
  target: ControlTarget,
  request: ControlAsk,
  timeoutMs: number,
): Promise<ControlReply> {
  const payload: ControlRequest =
    'newSession' in request
      ? { newSession: request.newSession }
      : { bytes: Buffer.from(request.bytes).toString('base64') };
  if ('bytes' in request && request.replyWindowMs !== undefined) payload.replyWindowMs = request.replyWindowMs;
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

/** What the owner of a link does with its control requests. */
export interface ControlHandlers {
  /** Writes the bytes to the target; resolves to how many were written and into which session. */
  write(request: ControlWrite): Promise<Omit<ControlReply, 'ok'>>;
  /** Ends the link's session and starts a new one on the same connection; resolves to its id. */
  newSession?(reason: string): Promise<string>;
}

export interface ControlServer {
  stop(): void;
}

/**
 * Answers the control requests of one link: checks each request (JSON; base64 `bytes` of
 * 1..MAX_CONTROL_BYTES, or `newSession`) and answers a bad one itself, hands a good one to its
 * handler, and replies with what the handler resolves to; a rejection becomes
 * `{ ok: false, written: 0, error: <its message> }`.
 */
export function serveControl(bus: Bus, target: ControlTarget, handlers: ControlHandlers): ControlServer {
  const sub: Subscription = bus.nc.subscribe(bus.names.ctlSubject(target.rig, target.link), {
    callback: (err, msg) => {
      if (err) return;
      const reply = (r: ControlReply) => msg.respond(JSON.stringify(r));
      const refuse = (error: string) => reply({ ok: false, written: 0, error });
      let request: ControlRequest;
      try {
        request = msg.json<ControlRequest>();
      } catch {
        refuse('request is not JSON: send {"bytes": "<base64>"}');
        return;
      }
      const failed = (e: unknown) => refuse(e instanceof Error ? e.message : `${e}`);
      if (typeof request?.newSession === 'string') {
        if (!handlers.newSession) refuse('this link cannot start a new session');
        else
          handlers.newSession(request.newSession).then((session) => reply({ ok: true, written: 0, session }), failed);
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
