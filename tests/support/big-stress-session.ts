// The big capture (shared/bench/qs/big_stress.qs.gz, never copied into the repo: 1.2 M records)
// stored as a lab's records get in: `tracehub replay` of the capture into a gateway link,
// decoded by a decoder-qs process and stored by a storage process.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { getSession, isSessionComplete } from '@tracehub/db';
import type { RunningProcess } from '../foundation/processes.js';
import { replay, requireBuild, startService, stopAll } from '../pipeline/harness.js';
import { natsUrl, sharedDir, until } from './index.js';
import type { TestBackends } from './test-backends.js';

export const BIG_STRESS_CAPTURE = join(sharedDir, 'bench', 'qs', 'big_stress.qs.gz');

export interface StoredBigStress {
  session: string;
  /** Records stored. */
  records: number;
  /** Stops the services and removes the scratch copy of the capture. */
  close(): Promise<void>;
}

/**
 * Replays big_stress as `rig`/`link` (with replay `flags`: link settings such as
 * `--tickRate 10000000`) through a decoder and a storage process of the test's own; resolves
 * when its session is stored whole.
 */
export async function storeBigStress(
  backends: TestBackends,
  rig: string,
  link: string,
  flags: string[] = [],
): Promise<StoredBigStress> {
  requireBuild();
  const scratch = mkdtempSync(join(tmpdir(), 'th-big-'));
  const services: RunningProcess[] = [];
  const close = async () => {
    await stopAll(services);
    rmSync(scratch, { recursive: true, force: true });
  };
  try {
    const file = join(scratch, 'big_stress.qs');
    writeFileSync(file, gunzipSync(readFileSync(BIG_STRESS_CAPTURE)));
    const env = { natsUrl: natsUrl(), databaseUrl: backends.fresh.url, prefix: backends.bus.names.prefix };
    services.push(await startService('decoder-qs', env), await startService('storage', env));
    const session = await replay(env, rig, link, 'qs', file, flags);
    const row = await until(
      'the replayed session stored whole',
      async () => {
        const s = await getSession(backends.db, session);
        return s && isSessionComplete(s) ? s : undefined;
      },
      // 1.2 M records through two processes: a minute and a half on a quiet machine, more on a busy one.
      300_000,
    );
    return { session, records: Number(row.record_count), close };
  } catch (err) {
    await close();
    throw err;
  }
}
