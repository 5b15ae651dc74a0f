// A watch rule's judge dies: two API processes on one database and bus, a rule added on A
// fires there; A is SIGKILLed; B takes the rule over within a lease, goes on from the alert
// stored as firing (it resolves it, never fires it a second time), and judges new records.
import { randomBytes } from 'node:crypto';
import type { Alert } from '@tracehub/api-contract';
import { transitionRecord, until } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, type ProcessBackends, processBackends, startApiProcess } from '../support/api-process.js';
import { publishLive } from '../support/publish-live.js';

const TOKEN = `takeover-${randomBytes(8).toString('hex')}`;
const LEASE_MS = 1500;

let world: ProcessBackends;

async function startApi(): Promise<ApiProcess> {
  const api = await startApiProcess(world.env, TOKEN, { WATCH_LEASE_MS: String(LEASE_MS), WATCH_TICK_MS: '100' });
  world.procs.push(api.proc);
  return api;
}

let seq = 0;
/** One live record of rigT/uart0 received now, with `text`. */
function publish(text: string): void {
  const record = transitionRecord({ rig: 'rigT', link: 'uart0', session: 's-takeover' }, seq++, {
    hostNs: (BigInt(Date.now()) * 1_000_000n).toString(),
    text,
  });
  publishLive(world.backends.bus, [record], record.chunk);
}

beforeAll(async () => {
  world = await processBackends('watchtakeover');
}, 60_000);

afterAll(() => world?.close());

describe('a watch rule whose process dies', () => {
  it('is taken over by the other process, which resolves the alert it left and judges on', async () => {
    const [a, b] = [await startApi(), await startApi()];
    const added = await a.call('POST', '/rules', {
      id: 'boom',
      name: 'boom',
      condition: { kind: 'records', filter: { text: 'BOOM' }, windowSeconds: 3 },
      scope: { rigs: ['rigT'] },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const judgeA = added.body.evaluatedBy as string;
    expect(judgeA).toMatch(new RegExp(`:${a.proc.child.pid}:`));
    publish('BOOM one');
    const first = await until('the alert fired on A', async () => {
      const alerts = (await b.call('GET', '/alerts?rule=boom')).body.alerts as Alert[];
      return alerts[0]?.state === 'firing' && alerts[0];
    });

    const killedAt = Date.now();
    a.proc.child.kill('SIGKILL');
    await a.proc.exited;
    const judgeB = await until(
      'B to judge the rule',
      async () => {
        const rule = (await b.call('GET', '/rules/boom')).body;
        return rule.evaluatedBy !== null && rule.evaluatedBy !== judgeA && rule.evaluatedBy;
      },
      LEASE_MS * 4,
    );
    const movedMs = Date.now() - killedAt;
    expect(judgeB).toMatch(new RegExp(`:${b.proc.child.pid}:`));
    expect(movedMs).toBeLessThan(LEASE_MS + 3000);

    // B goes on from the stored alert: it clears when its window passes, and is not fired again.
    await until('the alert A fired resolved by B', async () => {
      const alerts = (await b.call('GET', '/alerts?rule=boom')).body.alerts as Alert[];
      return alerts.length === 1 && alerts[0].state === 'resolved';
    });
    // B judges new records.
    publish('BOOM two');
    const second = await until('a new alert from B', async () => {
      const alerts = (await b.call('GET', '/alerts?rule=boom')).body.alerts as Alert[];
      return alerts.length === 2 && alerts[0];
    });
    expect(second.id).not.toBe(first.id);
    expect(second.seq).toBe(1);
    console.log(`watch rule taken over by the surviving process ${movedMs} ms after its process was killed`);
  }, 60_000);
});
