import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { connectBus, ensureTopology, publishRecordBatch, removeTopology } from '@tracehub/bus';
import { natsUrl, repoRoot, uniquePrefix, waitUntil } from '@tracehub/tests/support';
import { describe, expect, it } from 'vitest';

describe('tracehub tail', () => {
  it('prints the live records of the links it is asked for, and no others', async () => {
    const prefix = uniquePrefix('tail');
    const bus = await connectBus({ url: natsUrl(), name: 'tail-test', prefix });
    await ensureTopology(bus);
    const child = spawn(
      process.execPath,
      [
        join(repoRoot, 'apps/cli/dist/main.js'),
        'tail',
        '--rig',
        'rigT',
        '--bus-prefix',
        prefix,
        '--nats-url',
        natsUrl(),
        // No decoder runs on this prefix: the test publishes the records itself.
        '--force',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (err += String(d)));
    try {
      await waitUntil(async () => err.includes('tailing'), 30_000, 'tail to start');
      await bus.nc.flush();
      const record = (rig: string, seq: number, text: string) => ({
        rig,
        link: 'l1',
        session: 's1',
        seq,
        chunk: 0,
        protocol: 'qs' as const,
        hostNs: '1',
        targetTs: null,
        kind: 'record' as const,
        type: 1,
        name: 'X',
        fields: {},
        text,
        raw: '',
      });
      // Give the subscription a moment to reach the server before publishing.
      await new Promise((r) => setTimeout(r, 300));
      await publishRecordBatch(bus, {
        protocol: 'qs',
        rig: 'other',
        link: 'l1',
        session: 's0',
        chunk: 0,
        hostNs: '1',
        eos: false,
        records: [record('other', 0, 'not me')],
      });
      await publishRecordBatch(bus, {
        protocol: 'qs',
        rig: 'rigT',
        link: 'l1',
        session: 's1',
        chunk: 0,
        hostNs: '1',
        eos: false,
        records: [record('rigT', 0, 'first'), record('rigT', 1, ''), record('rigT', 2, 'second')],
      });
      await waitUntil(async () => out.includes('second'), 30_000, 'the records');
      expect(out).toBe('rigT/l1 first\nrigT/l1 second\n');
    } finally {
      child.kill('SIGINT');
      await removeTopology(bus);
      await bus.close();
    }
  });
});
