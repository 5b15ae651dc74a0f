import { CuttableTcpProxy, type FreshDatabase, freshDatabase } from '@tracehub/tests/support';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../src/index.js';

let fresh: FreshDatabase;
let proxy: CuttableTcpProxy;

beforeAll(async () => {
  fresh = await freshDatabase('dbconn');
  const url = new URL(fresh.url);
  proxy = new CuttableTcpProxy(url.hostname, Number(url.port || 5432));
  await proxy.open();
});

afterAll(async () => {
  await proxy?.cut();
  await fresh?.drop();
});

describe('createDb', () => {
  it('survives its server going away while a transaction holds a client between two statements', async () => {
    const url = new URL(fresh.url);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.listenPort);
    const db = createDb(url.toString(), { connectTimeoutMs: 1000 });
    try {
      const transaction = db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        // The connection ends while the client is checked out and idle: it emits 'error'.
        await proxy.cut();
        await new Promise((r) => setTimeout(r, 300));
        await sql`select 2`.execute(trx);
      });
      await expect(transaction).rejects.toThrow();
      await expect(sql`select 3`.execute(db)).rejects.toThrow();
      // The server is back: the pool has dropped the broken client and connects afresh.
      await proxy.open();
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await db.destroy();
    }
  });
});
