import type { Command } from 'commander';

/** Where the CLI finds the services: flags first, then the same environment the services read. */
export interface ConnectionOptions {
  natsUrl: string;
  natsCreds?: string;
  natsTlsCa?: string;
  databaseUrl: string;
  busPrefix: string;
}

/** How `connectBus` reaches NATS with these options (credentials and TLS as the services take them). */
export function natsConnection(opts: Pick<ConnectionOptions, 'natsUrl' | 'natsCreds' | 'natsTlsCa'>) {
  const cert = process.env.NATS_TLS_CERT;
  const key = process.env.NATS_TLS_KEY;
  const tls = {
    ...(opts.natsTlsCa ? { caFile: opts.natsTlsCa } : {}),
    ...(cert ? { certFile: cert } : {}),
    ...(key ? { keyFile: key } : {}),
  };
  return {
    url: opts.natsUrl,
    ...(opts.natsCreds ? { credsFile: opts.natsCreds } : {}),
    ...(Object.keys(tls).length > 0 ? { tls } : {}),
  };
}

export function addConnectionOptions(cmd: Command, needs: { nats?: boolean; db?: boolean }): Command {
  if (needs.nats) {
    cmd.option('--nats-url <url>', 'NATS server (env NATS_URL)', process.env.NATS_URL ?? 'nats://127.0.0.1:4222');
    cmd.option('--nats-creds <file>', 'NATS credentials file (env NATS_CREDS)', process.env.NATS_CREDS || undefined);
    cmd.option(
      '--nats-tls-ca <file>',
      "CA of the NATS server's certificate (env NATS_TLS_CA; a client certificate: NATS_TLS_CERT, NATS_TLS_KEY)",
      process.env.NATS_TLS_CA || undefined,
    );
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

/** A command about one link: `--rig` and `--link` name it, both required. */
export function linkCommand(parent: Command, name: string, description: string): Command {
  return parent
    .command(name)
    .description(description)
    .requiredOption('--rig <rig>', 'rig name')
    .requiredOption('--link <link>', 'link name');
}
