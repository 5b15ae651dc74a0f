import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeTraceLines, encodeTraceMessage, PalmReporterStandIn, TraceKind } from '../src/index.js';
import { concat, hex } from './helpers.js';

const E1 = hex('01 00 00 00 00 19  01 00 05 80 00 00 00 01  05 00 05 48 65 6C 6C 6F  00 00 00');
const N3 = hex('01 00 00 00 00 13 01 00 04 80 00 00 01 05 00 00 00 00 00');
const N1 = hex('02 00 00 00 00 14 01 00 05 80 00 00 00 01 05 00 00 00 00 00');

const sockets: Socket[] = [];
const standIns: PalmReporterStandIn[] = [];

async function open(port: number): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1' });
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));
}

async function startStandIn(): Promise<PalmReporterStandIn> {
  const standIn = new PalmReporterStandIn();
  standIns.push(standIn);
  await standIn.listen(0);
  return standIn;
}

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const standIn of standIns.splice(0)) await standIn.close();
});

describe('PalmReporterStandIn over real TCP', () => {
  it('receives messages written in pieces, and records a dropped one', async () => {
    const standIn = await startStandIn();
    const socket = await open(standIn.port);
    const stream = concat(
      E1,
      N3,
      ...encodeTraceLines({ text: 'first\nsecond “quoted”', processId: 12, threadId: 3, timestampMs: 99 }),
      encodeTraceMessage({ bytes: Uint8Array.of(1, 2, 3) }),
    );
    // Odd-sized writes, so messages straddle TCP segments.
    for (let at = 0; at < stream.length; at += 7) socket.write(stream.subarray(at, at + 7));
    const messages = await standIn.waitFor(4, 5000);
    expect(messages.map((message) => message.text)).toEqual(['Hello', 'first', 'second “quoted”', null]);
    expect(messages[1]).toMatchObject({ processId: 12, threadId: 3, timestamp: 99, module: 0x8000 });
    expect(messages[3]).toMatchObject({ kind: TraceKind.Binary, data: Uint8Array.of(1, 2, 3) });
    expect(standIn.problems.map((received) => received.problem.code)).toEqual(['bad-parameter-length']);
    expect(standIn.connections).toHaveLength(1);
    expect(standIn.connections[0]).toMatchObject({ id: 1, bytes: stream.length, closedAt: null });
    expect(standIn.messages.every((received) => received.connection === 1)).toBe(true);
  });

  it('closes a connection whose framing is lost, and keeps serving others', async () => {
    const standIn = await startStandIn();
    const bad = await open(standIn.port);
    const good = await open(standIn.port);
    bad.write(N1);
    await closed(bad);
    good.write(E1);
    await standIn.waitFor(1);
    expect(standIn.problems).toMatchObject([
      { connection: 1, problem: { code: 'bad-version', action: 'end-connection' } },
    ]);
    expect(standIn.connections[0].closedForProblem).toBe(true);
    expect(standIn.messages).toMatchObject([{ connection: 2, message: { text: 'Hello' } }]);
  });

  it('reports a message cut by the end of the connection', async () => {
    const standIn = await startStandIn();
    const socket = await open(standIn.port);
    socket.end(E1.subarray(0, 10));
    await closed(socket);
    await standIn.waitForConnections(1);
    await expect.poll(() => standIn.problems.map((received) => received.problem.code)).toEqual(['truncated-message']);
  });

  it('stops and starts on the same port', async () => {
    const standIn = await startStandIn();
    const port = standIn.port;
    const first = await open(port);
    first.write(E1);
    await standIn.waitFor(1);
    await standIn.close();
    await closed(first);
    await expect(open(port)).rejects.toThrow(/ECONNREFUSED/);
    expect(await standIn.listen()).toBe(port);
    const second = await open(port);
    second.write(E1);
    await standIn.waitFor(2);
    expect(standIn.connections.map((connection) => connection.id)).toEqual([1, 2]);
    expect(standIn.connections[0].closedAt).not.toBeNull();
  });

  it('can stop reading, like a Reporter that falls behind', async () => {
    const standIn = await startStandIn();
    standIn.pauseReading();
    const socket = await open(standIn.port);
    socket.write(E1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(standIn.messages).toHaveLength(0);
    standIn.resumeReading();
    await standIn.waitFor(1);
  });

  it('reports events in arrival order through onEvent', async () => {
    const seen: string[] = [];
    const standIn = new PalmReporterStandIn({
      onEvent: (event) =>
        seen.push(
          event.type === 'message'
            ? `message ${event.message.text}`
            : event.type === 'problem'
              ? `problem ${event.problem.code}`
              : event.type,
        ),
    });
    standIns.push(standIn);
    const socket = await open(await standIn.listen(0));
    socket.write(concat(E1, N3, E1, N1));
    await closed(socket);
    await expect
      .poll(() => seen)
      .toEqual([
        'connected',
        'message Hello',
        'problem bad-parameter-length',
        'message Hello',
        'problem bad-version',
        'closed',
      ]);
  });

  it('waitFor rejects with a clear message on timeout', async () => {
    const standIn = await startStandIn();
    await expect(standIn.waitFor(1, 50)).rejects.toThrow('waited 50 ms for 1 PalmTrace messages, got 0');
  });
});
