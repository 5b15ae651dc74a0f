/** Where a link's trace box output listens. */
export interface TraceBoxOption {
  host: string;
  port: number;
  /** Most messages a client may fall behind before it misses the oldest (`tracebox-queue=`, default 10 000). */
  queueMessages?: number;
}

const TRACEBOX = /^(?:(.*):)?([0-9]{1,5})$/;

/**
 * Takes the trace box output option out of a link address, leaving the rest for the link
 * source: `tcp-listen::7000?tracebox=:7801` -> `tcp-listen::7000` and TCP port 7801 on all
 * interfaces (`tracebox=127.0.0.1:7801`, `tracebox=7801` and `tracebox=:0`, any free port, too).
 */
export function takeTraceBoxOption(address: string): { address: string; traceBox?: TraceBoxOption } {
  const [base, query] = address.split(/\?(.*)/s, 2);
  const params = new URLSearchParams(query ?? '');
  const value = params.get('tracebox');
  const queue = params.get('tracebox-queue');
  if (value === null && queue === null) return { address };
  const bad = (why: string) => new Error(`link address '${address}': ${why}`);
  if (value === null) throw bad('tracebox-queue needs tracebox=[HOST]:PORT');
  const m = TRACEBOX.exec(value);
  if (!m || Number(m[2]) > 65535) throw bad('tracebox= is [HOST]:PORT, the port 0..65535 (as in tracebox=:7801)');
  const traceBox: TraceBoxOption = { host: m[1] || '0.0.0.0', port: Number(m[2]) };
  if (queue !== null) {
    if (!/^[1-9][0-9]{0,8}$/.test(queue)) throw bad('tracebox-queue is a number of messages, at least 1');
    traceBox.queueMessages = Number(queue);
  }
  params.delete('tracebox');
  params.delete('tracebox-queue');
  const rest = params.toString();
  return { address: rest ? `${base}?${rest}` : base, traceBox };
}
