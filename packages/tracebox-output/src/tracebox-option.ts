/** Where a link's trace box output listens. */
export interface TraceBoxOption {
  host: string;
  port: number;
  /** Most messages a client may fall behind before it misses the oldest (`tracebox-queue=`, default 10 000). */
  queueMessages?: number;
}

/**
 * Takes the trace box output option out of a link address, leaving the rest for the link
 * source: `tcp-listen::7000?tracebox=:7801` -> `tcp-listen::7000` and TCP port 7801 on all
 * interfaces (`tracebox=127.0.0.1:7801`, `tracebox=7801` and `tracebox=:0`, any free port, too).
 */
export function takeTraceBoxOption(address: string): { address: string; traceBox?: TraceBoxOption } {
  const q = address.indexOf('?');
  if (q < 0) return { address };
  const params = new URLSearchParams(address.slice(q + 1));
  const value = params.get('tracebox');
  const queueText = params.get('tracebox-queue');
  if (value === null) {
    if (queueText !== null) throw new Error(`link address '${address}': tracebox-queue needs tracebox=[HOST]:PORT`);
    return { address };
  }
  params.delete('tracebox');
  params.delete('tracebox-queue');
  const queueMessages = queueText === null ? undefined : Number(queueText);
  if (queueMessages !== undefined && (!/^[0-9]{1,9}$/.test(queueText!) || queueMessages < 1)) {
    throw new Error(`link address '${address}': tracebox-queue is a number of messages, at least 1`);
  }
  const i = value.lastIndexOf(':');
  const host = i < 0 ? '' : value.slice(0, i);
  const portText = i < 0 ? value : value.slice(i + 1);
  const port = Number(portText);
  if (!/^[0-9]{1,5}$/.test(portText) || port > 65535) {
    throw new Error(`link address '${address}': tracebox= is [HOST]:PORT, the port 0..65535 (as in tracebox=:7801)`);
  }
  const rest = params.toString();
  const traceBox: TraceBoxOption = { host: host === '' ? '0.0.0.0' : host, port };
  if (queueMessages !== undefined) traceBox.queueMessages = queueMessages;
  return { address: address.slice(0, q) + (rest ? `?${rest}` : ''), traceBox };
}
