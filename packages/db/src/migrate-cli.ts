#!/usr/bin/env node
/**
 * `node packages/db/dist/migrate-cli.js up|down [--all]` — migrates the database at
 * DATABASE_URL (default postgres://postgres@127.0.0.1:5432/tracehub).
 */
import { redactUrl } from '@tracehub/contracts';
import { createDb } from './create-db.js';
import { migrateDown, migrateToLatest, migrateToNothing } from './migrator.js';

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/tracehub';

async function main(argv: string[]): Promise<number> {
  const direction = argv[0] ?? 'up';
  if (direction !== 'up' && direction !== 'down') {
    process.stderr.write('usage: migrate-cli up | down [--all]\n');
    return 2;
  }
  const url = process.env.DATABASE_URL || DEFAULT_URL;
  const db = createDb(url, { maxConnections: 2, applicationName: 'tracehub-migrate' });
  try {
    if (direction === 'up') {
      const applied = await migrateToLatest(db);
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'schema is up to date\n');
    } else {
      const undone = argv.includes('--all') ? await migrateToNothing(db) : await migrateDown(db);
      process.stdout.write(undone.length ? `undone: ${undone.join(', ')}\n` : 'nothing to undo\n');
    }
    return 0;
  } catch (error) {
    process.stderr.write(`migrate ${direction} on ${redactUrl(url)} failed: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await db.destroy();
  }
}

process.exitCode = await main(process.argv.slice(2));
