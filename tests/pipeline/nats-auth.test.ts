import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  fixturePath,
  freePort,
  makeCertificates,
  makeClientCertificate,
  NatsOperator,
  PrivateNats,
  type ServerCertificates,
  uniquePrefix,
} from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNode, within } from '../foundation/processes.js';
import { connectTarget } from '../support/tcp-target.js';
import * as pipeline from './harness.js';

// NATS that lets a service in only with a client certificate its CA signed (mutual TLS), and
// NATS in operator mode that lets a service in only with a credentials file (NATS_CREDS): the
// pipeline works through each, and a service without what the server asks for says so in one
// line and exits.

let dir: string;
let run: pipeline.PipelineTestRun;

beforeAll(async () => {
  run = await pipeline.startPipelineTestRun('natsauth');
  dir = mkdtempSync(join(tmpdir(), 'th-nats-auth-'));
}, 60_000);

afterAll(async () => {
  await run?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * Starts a gateway (a tcp-listen link), a QS decoder, storage and the api, all reaching NATS
 * with `natsUrl` and `natsSettings`; streams a capture to the gateway and checks what storage
 * kept is what `tracehub decode` makes of the file.
 */
async function carriesACapture(natsUrl: string, natsSettings: Record<string, string>, rig: string): Promise<void> {
  const env: pipeline.PipelineEnv = { natsUrl, databaseUrl: run.databaseUrl, prefix: uniquePrefix('auth') };
  const port = await freePort();
  const services = [
    await pipeline.startService('gateway', env, {
      ...natsSettings,
      TRACEHUB_LINKS: `qs/${rig}/tcp0=tcp-listen:127.0.0.1:${port}`,
    }),
    await pipeline.startService('decoder-qs', env, natsSettings),
    await pipeline.startService('storage', env, natsSettings),
    await pipeline.startService('api', env, { ...natsSettings, API_HOST: '127.0.0.1' }),
  ];
  try {
    const file = fixturePath('qs', 'dpp_posix.qs');
    const target = await connectTarget(port);
    await new Promise<void>((resolve, reject) => target.end(readFileSync(file), () => resolve()).once('error', reject));
    const sessions = await pipeline.waitForSessions(run.db, rig, 'tcp0', 150);
    expect(sessions).toHaveLength(1);
    const stored = await pipeline.storedSession(run.db, sessions[0]);
    const expected = await pipeline.offlineDecode(file, 'qs');
    expect(expected.length).toBeGreaterThan(0);
    expect(stored.map(pipeline.decoded)).toEqual(expected.map(pipeline.decoded));
  } finally {
    await pipeline.stopAll(services);
  }
}

/** Starts storage with `natsSettings`; expects it to exit 1 within 30 s and returns its last line's message. */
async function refusal(natsSettings: Record<string, string>): Promise<string> {
  const proc = startNode('apps/storage/dist/main.js', {
    DATABASE_URL: run.databaseUrl,
    HEALTH_PORT: '0',
    TRACEHUB_BUS_PREFIX: uniquePrefix('authno'),
    ...natsSettings,
  });
  try {
    const { value } = await within(proc.exited, 30_000, 'storage giving up');
    expect(value).toBe(1);
    const line = proc.stdout.at(-1) ?? '';
    const { msg } = JSON.parse(line);
    expect(msg).not.toContain('\n');
    return msg;
  } finally {
    proc.child.kill('SIGKILL');
  }
}

describe('NATS that requires client certificates (mutual TLS)', () => {
  let nats: PrivateNats;
  let certs: ServerCertificates;
  let url: string;

  beforeAll(async () => {
    certs = makeCertificates(join(dir, 'tls'));
    // tls { verify: true }: the server asks every client for a certificate its CA signed.
    const config = join(dir, 'verify.conf');
    writeFileSync(
      config,
      `tls {\n  cert_file: "${certs.cert}"\n  key_file: "${certs.key}"\n  ca_file: "${certs.ca}"\n  verify: true\n}\n`,
    );
    nats = await PrivateNats.start(['-c', config]);
    url = `tls://127.0.0.1:${nats.port}`;
  }, 60_000);

  afterAll(async () => {
    await nats?.stop();
  });

  it('carries a capture from the gateway to storage with NATS_TLS_CERT, NATS_TLS_KEY and NATS_TLS_CA', async () => {
    const client = makeClientCertificate(certs, 'tracehub-service');
    await carriesACapture(url, { NATS_TLS_CA: certs.ca, NATS_TLS_CERT: client.cert, NATS_TLS_KEY: client.key }, 'rigM');
  }, 120_000);

  it('refuses a service without a client certificate, or with one another CA signed, in one line naming the settings', async () => {
    const otherCa = makeCertificates(join(dir, 'other-ca'));
    const stranger = makeClientCertificate(otherCa, 'stranger');
    const [none, foreign] = await Promise.all([
      refusal({ NATS_URL: url, NATS_TLS_CA: certs.ca }),
      refusal({ NATS_URL: url, NATS_TLS_CA: certs.ca, NATS_TLS_CERT: stranger.cert, NATS_TLS_KEY: stranger.key }),
    ]);
    expect(none).toMatch(
      /^cannot start: cannot connect to NATS at tls:\/\/127\.0\.0\.1:\d+: .*client certificates.*set NATS_TLS_CERT and NATS_TLS_KEY.*check NATS_URL/,
    );
    expect(foreign).toMatch(
      /^cannot start: cannot connect to NATS at tls:\/\/127\.0\.0\.1:\d+: .*client certificates, it did not accept NATS_TLS_CERT.*check NATS_URL/,
    );
  }, 60_000);
});

describe('NATS in operator mode (NATS_CREDS)', () => {
  let nats: PrivateNats;
  let operator: NatsOperator;

  beforeAll(async () => {
    // An operator, its account (JetStream allowed) and users, as nsc makes them; the server
    // trusts the operator and knows the account from its config.
    operator = new NatsOperator();
    const config = join(dir, 'operator.conf');
    writeFileSync(config, `${operator.serverConfig()}\n`);
    nats = await PrivateNats.start(['-c', config]);
  }, 60_000);

  afterAll(async () => {
    await nats?.stop();
  });

  it("carries a capture from the gateway to storage with a user's credentials file", async () => {
    const creds = operator.credsFile(dir, 'tracehub-service');
    await carriesACapture(nats.url, { NATS_CREDS: creds }, 'rigO');
  }, 120_000);

  it('refuses a service with credentials of an account the server does not know, or with none, in one line', async () => {
    const stranger = operator.credsFile(dir, 'stranger', 'unknown account');
    const [foreign, none] = await Promise.all([
      refusal({ NATS_URL: nats.url, NATS_CREDS: stranger }),
      refusal({ NATS_URL: nats.url }),
    ]);
    for (const msg of [foreign, none]) {
      expect(msg).toMatch(
        /^cannot start: cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+: Authorization Violation.*check NATS_URL \(and NATS_CREDS/,
      );
    }
  }, 60_000);
});
