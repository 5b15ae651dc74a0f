// A QS link as a gateway serves it, with a scripted target on its TCP side: the answers the
// control tests read are decoded from the records this target sends.
import net from 'node:net';
import type { Bus } from '@tracehub/bus';
import type { Database } from '@tracehub/db';
import { Gateway, TcpListenSource } from '@tracehub/link';
import { ScriptedTarget } from '@tracehub/qspy-frontend';
import type { Kysely } from 'kysely';
import { type StoredFixture, storeQsFixture } from './qs-fixture-session.js';
import { onTestBackends } from './test-backends.js';
import { T0 } from './time-zero.js';

export interface ScriptedQsLink {
  gateway: Gateway;
  /** The target's end of the link's TCP connection. */
  socket: net.Socket;
  scripted: ScriptedTarget;
  /** The UDP port of the link's front-end. */
  frontEndPort: number;
  stop(): Promise<void>;
}

/**
 * A gateway for `rig/link` with a front-end port, and a target with 4-byte pointers that
 * registers its objects (l_philo, l_table), a signal (EAT_SIG = 7) and a command (MY_CMD = 3)
 * on start; resolves once the gateway has read those dictionaries.
 */
export async function startScriptedQsLink(bus: Bus, rig: string, link: string): Promise<ScriptedQsLink> {
  const source = new TcpListenSource('127.0.0.1', 0);
  const gateway = new Gateway({
    bus,
    link: { protocol: 'qs', rig, link },
    source,
    flushMs: 5,
    frontEnd: { host: '127.0.0.1', port: 0, idleSeconds: 0 },
  });
  await gateway.start();
  const socket = net.connect(source.boundPort, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const scripted = new ScriptedTarget((bytes) => socket.write(bytes), { objPtrSize: 4, funPtrSize: 4 });
  socket.on('data', (d) => scripted.receive(d));
  scripted.start({
    objects: [
      [0x20001000n, 'l_philo'],
      [0x20002000n, 'l_table'],
    ],
    signals: [[7, 0n, 'EAT_SIG']],
    commands: [[3, 'MY_CMD']],
  });
  for (let i = 0; i < 200 && !gateway.qsPoint?.target.names.object('l_table'); i++)
    await new Promise((r) => setTimeout(r, 10));
  return {
    gateway,
    socket,
    scripted,
    frontEndPort: gateway.qsPoint?.port?.port as number,
    stop: async () => {
      socket.destroy();
      await gateway.stop(1000);
    },
  };
}

export interface ControlBackends {
  db: Kysely<Database>;
  bus: Bus;
  /** The link as storage has it: dpp_qv's records in one session. */
  stored: StoredFixture;
  link: ScriptedQsLink;
  close(): Promise<void>;
}

/**
 * A database and a bus of the test's own, the QS link `rig/link` stored with a session of
 * dpp_qv, and a gateway serving that link with a scripted target (`startScriptedQsLink`).
 */
export async function controlBackends(label: string, rig: string, link: string): Promise<ControlBackends> {
  const { backends, stored, served, close } = await onTestBackends(label, { topology: true }, async ({ db, bus }) => {
    const stored = await storeQsFixture(db, 'dpp_qv', {
      rig,
      link,
      session: `s-${label}`,
      startNs: T0,
    });
    const served = await startScriptedQsLink(bus, rig, link);
    return { stored, served, close: () => served.stop() };
  });
  return { db: backends.db, bus: backends.bus, stored, link: served, close };
}
