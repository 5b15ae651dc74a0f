import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { freshDatabase, natsUrl } from './index.js';

describe('test harness', () => {
  it('gives a fresh database of its own', async () => {
    const db = await freshDatabase('harness');
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query('select current_database() as name');
    await client.end();
    await db.drop();
    expect(rows[0].name).toBe(db.name);
  });

  it('knows where NATS is', () => {
    expect(natsUrl()).toMatch(/^nats:\/\//);
  });
});
