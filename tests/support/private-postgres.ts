import { execFile } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, waitForPort } from './private-nats.js';

const run = promisify(execFile);

/**
 * A Postgres cluster of a test's own (initdb in a temporary directory, a free port, trust
 * authentication for `postgres`), which the test may stop and start again without disturbing
 * any other test. Uses the newest `/usr/lib/postgresql/<version>/bin` (or `POSTGRES_BIN`); run
 * as root, it runs Postgres as the `postgres` user, since Postgres refuses to run as root.
 */
export class PrivatePostgres {
  private running = false;

  private constructor(
    readonly port: number,
    private readonly bin: string,
    readonly dataDir: string,
    private readonly baseDir: string,
    private readonly serverOptions: readonly string[] = [],
  ) {}

  /**
   * `tls`: a server certificate and key (PEM files) the server takes connections with, and
   * only with: every connection that is not TLS is refused (pg_hba `hostnossl ... reject`).
   */
  static async start(opts: { tls?: { cert: string; key: string } } = {}): Promise<PrivatePostgres> {
    const bin = postgresBinDir();
    const baseDir = mkdtempSync(join(tmpdir(), 'th-pg-'));
    const dataDir = join(baseDir, 'data');
    if (asRoot()) {
      const { uid, gid } = await postgresUser();
      chownSync(baseDir, uid, gid);
    }
    const serverOptions: string[] = [];
    if (opts.tls) {
      // Postgres reads its key only when the key is its own and private to it.
      const cert = join(baseDir, 'server.pem');
      const key = join(baseDir, 'server.key');
      copyFileSync(opts.tls.cert, cert);
      copyFileSync(opts.tls.key, key);
      chmodSync(key, 0o600);
      if (asRoot()) {
        const { uid, gid } = await postgresUser();
        chownSync(cert, uid, gid);
        chownSync(key, uid, gid);
      }
      serverOptions.push('-c ssl=on', `-c ssl_cert_file=${cert}`, `-c ssl_key_file=${key}`);
    }
    const pg = new PrivatePostgres(await freePort(), bin, dataDir, baseDir, serverOptions);
    await pg.exec('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
    if (opts.tls) {
      const hba = join(dataDir, 'pg_hba.conf');
      writeFileSync(
        hba,
        'local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostnossl all all 0.0.0.0/0 reject\n',
      );
      if (asRoot()) {
        const { uid, gid } = await postgresUser();
        chownSync(hba, uid, gid);
      }
    }
    await pg.resume();
    return pg;
  }

  /** `postgres://postgres@127.0.0.1:<port>/<database>`. */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts the server (again), on the same port with the same data. */
  async resume(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      `-k ${this.baseDir}`,
      '-c listen_addresses=127.0.0.1',
      // A test's data need not survive a power cut.
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      ...this.serverOptions,
    ].join(' ');
    await this.exec('pg_ctl', ['-D', this.dataDir, '-l', join(this.baseDir, 'log'), '-o', options, '-w', 'start']);
    this.running = true;
    await waitForPort(this.port, 10_000);
  }

  /** Stops the server (fast shutdown: every connection is cut at once); its data stays. */
  async pause(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    await this.exec('pg_ctl', ['-D', this.dataDir, '-m', 'fast', '-w', 'stop']);
  }

  /** Stops the server and removes its data. */
  async stop(): Promise<void> {
    await this.pause().catch(() => {});
    rmSync(this.baseDir, { recursive: true, force: true });
  }

  private async exec(tool: string, args: string[]): Promise<void> {
    const path = join(this.bin, tool);
    const [file, argv] = asRoot() ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
    await run(file, argv, { cwd: this.baseDir });
  }
}

function asRoot(): boolean {
  return userInfo().uid === 0;
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const { stdout } = await run('id', ['-u', 'postgres']);
  const { stdout: g } = await run('id', ['-g', 'postgres']);
  return { uid: Number(stdout.trim()), gid: Number(g.trim()) };
}

function postgresBinDir(): string {
  if (process.env.POSTGRES_BIN) return process.env.POSTGRES_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0)
    throw new Error(
      'no Postgres server binaries: install postgresql (Debian) or set POSTGRES_BIN to its bin directory',
    );
  return join(root, versions[0], 'bin');
}
