import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A NATS server of a test's own, which the test may stop and start again (keeping its
 * JetStream data) without disturbing any other test. Runs the local `nats-server` binary
 * (NATS_SERVER_BIN, else /usr/sbin/nats-server or the PATH).
 */
export class PrivateNats {
  private child: ChildProcess | undefined;
  readonly storeDir: string;

  private constructor(
    readonly port: number,
    private readonly bin: string,
    private readonly extraArgs: string[],
  ) {
    this.storeDir = mkdtempSync(join(tmpdir(), 'th-nats-'));
  }

  /** `extraArgs`: more nats-server flags (TLS, a user and password, ...). */
  static async start(extraArgs: string[] = []): Promise<PrivateNats> {
    const bin = natsServerBinary();
    const nats = new PrivateNats(await freePort(), bin, extraArgs);
    await nats.resume();
    return nats;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts the server (again), on the same port with the same data directory. */
  async resume(): Promise<void> {
    this.child = spawn(
      this.bin,
      ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir, ...this.extraArgs],
      { stdio: 'ignore' },
    );
    await waitForPort(this.port, 10_000);
  }

  /** Stops the server the hard way (SIGKILL); its data directory stays. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}

/**
 * A JetStream cluster of `size` private `nats-server` processes on this machine (their own
 * ports and store dirs, routes between them), for tests that kill nodes. `url` lists every
 * node, as services are given it.
 */
export class PrivateNatsCluster {
  private constructor(readonly nodes: PrivateNats[]) {}

  static async start(size = 3): Promise<PrivateNatsCluster> {
    const name = `th${process.pid}${Date.now().toString(36)}`;
    const clusterPorts = await Promise.all(Array.from({ length: size }, () => freePort()));
    const routes = clusterPorts.map((p) => `nats://127.0.0.1:${p}`).join(',');
    const nodes = await Promise.all(
      clusterPorts.map((port, i) =>
        PrivateNats.start([
          '-n',
          `${name}-${i + 1}`,
          '--cluster_name',
          name,
          '--cluster',
          `nats://127.0.0.1:${port}`,
          '--routes',
          routes,
        ]),
      ),
    );
    return new PrivateNatsCluster(nodes);
  }

  get url(): string {
    return this.nodes.map((n) => n.url).join(',');
  }

  /** The node named `name` (`<cluster>-<n>`, as JetStream reports a stream's leader). */
  node(name: string): PrivateNats {
    const n = Number(name.slice(name.lastIndexOf('-') + 1));
    const node = this.nodes[n - 1];
    if (!node) throw new Error(`no node ${name} in this cluster`);
    return node;
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop()));
  }
}

export function natsServerBinary(): string {
  const candidates = [
    process.env.NATS_SERVER_BIN,
    '/usr/sbin/nats-server',
    '/usr/bin/nats-server',
    '/usr/local/bin/nats-server',
  ];
  for (const c of candidates) if (c && existsSync(c)) return c;
  throw new Error('no nats-server binary: install nats-server (Debian package nats-server) or set NATS_SERVER_BIN');
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
