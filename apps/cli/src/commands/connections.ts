import type { Command } from 'commander';

/** Where the CLI finds the services: flags first, then the same environment the services read. */
export interface ConnectionOptions {
  natsUrl: string;
  databaseUrl: string;
  busPrefix: string;
}

export function addConnectionOptions(cmd: Command, needs: { nats?: boolean; db?: boolean }): Command {
  if (needs.nats) {
    cmd.option('--nats-url <url>', 'NATS server (env NATS_URL)', process.env.NATS_URL ?? 'nats://127.0.0.1:4222');
  }
  if (needs.db) {
    cmd.option(
      '--database-url <url>',
      'Postgres (env DATABASE_URL)',
      process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/tracehub',
    );
  }
  cmd.option(
    '--bus-prefix <prefix>',
    'prefix of stream and subject names (env TRACEHUB_BUS_PREFIX)',
    process.env.TRACEHUB_BUS_PREFIX ?? '',
  );
  return cmd;
}
