import { httpErrors } from '@fastify/sensible';
import { type Database, getLinkSettings, type SessionRow } from '@tracehub/db';
import type { Kysely } from 'kysely';

// The target-time axis of a session's views: records carry their target time in ticks (the
// decoder unwraps the stamps); the link's `tickRate` setting turns ticks into seconds here,
// when they are read, so that a rate set or corrected later holds for what was stored before.

/** The target-time axis: seconds with a tick rate, else ticks. */
export const unitOf = (tickRate: number | null) => (tickRate === null ? ('ticks' as const) : ('s' as const));

/**
 * The tick rate of a session's link: the setting the gateway sent with the session (a replay's
 * `--tickRate`), else the link's own; null when neither has one.
 */
export async function tickRateOf(db: Kysely<Database>, session: SessionRow): Promise<number | null> {
  return rateIn(session.link_settings) ?? rateIn(await getLinkSettings(db, session.rig, session.link)) ?? null;
}

/**
 * A settings document's tick rate: `tickRate`, else an STP link's `tickHz` (the device's ticks
 * per second when it sends no FREQ packet), so one setting of the clock serves both.
 */
function rateIn(settings: Record<string, unknown> | null | undefined): number | undefined {
  const rate = settings?.tickRate ?? settings?.tickHz;
  return typeof rate === 'number' && rate > 0 ? rate : undefined;
}

/** Ticks as seconds by `tickRate`; null without one. */
export function secondsOf(ticks: string | bigint, tickRate: number | null): number | null {
  return tickRate === null ? null : Number(ticks) / tickRate;
}

/**
 * A window end given in `unit` as whole ticks: seconds round up, so `[from, to)` holds what its
 * seconds say. With a whole tick rate the decimal seconds are multiplied exactly (0.0078147 s at
 * 10 MHz is tick 78147, which a double makes 78147.00000000001).
 */
export function ticksOf(text: string, unit: 'ticks' | 's', tickRate: number | null, name: string): bigint {
  if (unit === 'ticks') {
    if (text.includes('.')) throw httpErrors.badRequest(`${name}=${text}: ticks are whole (or give unit=s)`);
    return BigInt(text);
  }
  const rate = tickRate as number;
  if (!Number.isInteger(rate)) return BigInt(Math.ceil(Number(text) * rate - 1e-6));
  const [whole, fraction = ''] = text.split('.');
  const scale = 10n ** BigInt(fraction.length);
  const scaled = BigInt(whole + fraction) * BigInt(rate);
  return (scaled + scale - 1n) / scale;
}

/** A window of target time as a query gives it (`from`, `to` in `unit`), in ticks, with the session's tick rate. */
export async function targetWindowOf(
  db: Kysely<Database>,
  session: SessionRow,
  q: { from?: string; to?: string; unit: 'ticks' | 's' },
): Promise<{ tickRate: number | null; fromTicks?: bigint; toTicks?: bigint }> {
  const tickRate = await tickRateOf(db, session);
  if (q.unit === 's' && tickRate === null) {
    throw httpErrors.badRequest(
      `unit=s needs the tick rate of link ${session.rig}/${session.link}: set its tickRate setting (ticks per second), or give from/to in ticks`,
    );
  }
  return {
    tickRate,
    fromTicks: q.from === undefined ? undefined : ticksOf(q.from, q.unit, tickRate, 'from'),
    toTicks: q.to === undefined ? undefined : ticksOf(q.to, q.unit, tickRate, 'to'),
  };
}
