// What a timeline shows, apart from how it is drawn: the tracks of its lanes, their rows, the
// window over host time, and the api's answer in numbers relative to the view's origin.
import type { Timeline, TimelineItem, TimelineLane } from '@tracehub/api-contract';

/** Width of the track labels on the left, px. */
export const LABELS = 210;
/** Height of the time axis on top, px. */
export const AXIS = 46;
export const ROW = 24;
export const LANE_HEAD = 22;
/** The narrowest window a zoom goes to. */
export const MIN_SPAN = 1_000;

/** A record of a lane at its place on the view's axis (ns from the origin). */
export type PlacedItem = TimelineItem & { at: number };

/** One lane in numbers relative to the view's origin (ns), ready to draw. */
export interface DrawnLane {
  lane: TimelineLane;
  end: number;
  items: PlacedItem[];
  states: Array<{ track: string; at: number; state: string; seq: number }>;
}

/** A timeline's data in numbers relative to the view's origin (ns), ready to draw. */
export interface Drawn {
  from: number;
  to: number;
  bucketNs: number;
  lanes: DrawnLane[];
  /** Set when the axis is the target's clock: its times are ticks of `segment`, seconds by `tickRate` when known. */
  target?: TargetAxis;
}

/** A timeline on target time: the axis counts ticks of one segment. */
export interface TargetAxis {
  segment: number;
  tickRate: number | null;
}

/** A target time (ticks) as the axis labels it: seconds by the tick rate, else ticks. */
export function targetLabel(ticks: number, step: number, axis: TargetAxis): string {
  if (axis.tickRate === null) return `${Math.round(ticks)}`;
  const digits = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / axis.tickRate))));
  return `${(ticks / axis.tickRate).toFixed(digits)} s`;
}

/** A span of the axis in the unit that reads best: ns on host time, seconds (or ticks) on target time. */
export function axisSpanLabel(span: number, axis: TargetAxis | undefined): string {
  if (!axis) return spanLabel(span);
  return axis.tickRate === null ? `${Math.round(span)} ticks` : spanLabel((span * 1e9) / axis.tickRate);
}

/** A track of a lane: an active object (QS), a master/channel (STP), or the link (null). */
export interface Track {
  session: string;
  track: string | null;
  label: string;
}

/** A row of the canvas: a lane's head, or one of its tracks. */
export interface Row extends Track {
  y: number;
  head: boolean;
}

/**
 * The window of host time shown, relative to `origin` (ns): `view` of the whole `extent`, and
 * where on the canvas a time is (its plot area is the width right of the labels).
 */
export class Viewport {
  origin = 0n;
  extent: [number, number] = [0, 1];
  view: [number, number] = [0, 1];

  constructor(readonly width: () => number) {}

  plotWidth(): number {
    return this.width() - LABELS;
  }

  xOf(t: number): number {
    return LABELS + ((t - this.view[0]) / (this.view[1] - this.view[0])) * this.plotWidth();
  }

  tOf(x: number): number {
    return this.view[0] + ((x - LABELS) / this.plotWidth()) * (this.view[1] - this.view[0]);
  }

  /** Host time, ns since the epoch, of `offset` ns from the origin. */
  at(offset: number): bigint {
    return this.origin + BigInt(Math.round(offset));
  }

  /** Whether the whole span is shown. */
  isWhole(): boolean {
    return this.view[0] === this.extent[0] && this.view[1] === this.extent[1];
  }
}

/** Adds the tracks `t` shows to `tracks`, in a stable order: each session's link track, then its objects. */
export function learnTracks(tracks: Track[], t: Timeline, sessions: string[]): void {
  for (const lane of t.lanes) {
    const names = new Set<string | null>([null]);
    for (const b of lane.buckets) names.add(b.track);
    for (const i of lane.items) names.add(i.track);
    for (const s of lane.states) names.add(s.track);
    for (const name of names)
      if (!tracks.some((k) => k.session === lane.session && k.track === name))
        tracks.push({ session: lane.session, track: name, label: name ?? `${lane.rig}/${lane.link}` });
  }
  tracks.sort((a, b) =>
    a.session !== b.session
      ? sessions.indexOf(a.session) - sessions.indexOf(b.session)
      : a.track === null
        ? -1
        : b.track === null
          ? 1
          : a.track.localeCompare(b.track),
  );
}

/** The api's answer relative to `origin`. */
export function toDrawn(t: Timeline, origin: bigint): Drawn {
  const rel = (ns: string) => Number(BigInt(ns) - origin);
  return {
    from: rel(t.fromNs),
    to: rel(t.toNs),
    bucketNs: Number(t.bucketNs),
    lanes: t.lanes.map((lane) => ({
      lane,
      end: rel(lane.toNs),
      items: lane.items.map((i) => ({ ...i, at: rel(i.hostNs) })),
      states: lane.states.map((s) => ({ track: s.track, at: rel(s.hostNs), state: s.state, seq: s.seq })),
    })),
  };
}

/** The canvas's rows, top to bottom: a head per lane, then its tracks; and the height they take. */
export function layoutRows(tracks: Track[]): { rows: Row[]; height: number } {
  const rows: Row[] = [];
  let y = AXIS;
  let last = '';
  for (const t of tracks) {
    if (t.session !== last) {
      rows.push({ y, session: t.session, track: null, label: t.session, head: true });
      y += LANE_HEAD;
      last = t.session;
    }
    rows.push({ y, session: t.session, track: t.track, label: t.label, head: false });
    y += ROW;
  }
  return { rows, height: y + 8 };
}

/** Target time at a host time, interpolated between the records around it (detail only). */
export function targetClock(data: Drawn | undefined): (t: number) => string | null {
  const known = (data?.lanes ?? [])
    .flatMap((l) => l.items)
    .filter((i) => i.targetTs !== null)
    .map((i) => [i.at, Number(i.targetTs)] as const);
  return (t: number): string | null => {
    if (known.length < 2) return null;
    let i = known.findIndex(([at]) => at >= t);
    if (i <= 0) i = i === 0 ? 1 : known.length - 1;
    const [a0, v0] = known[i - 1];
    const [a1, v1] = known[i];
    if (t < a0 - (a1 - a0) * 4 || a1 === a0) return t >= a0 && t <= a1 ? String(v0) : null;
    return String(Math.round(v0 + ((t - a0) / (a1 - a0)) * (v1 - v0)));
  };
}

/** A duration in the unit that reads best. */
export function spanLabel(ns: number): string {
  if (ns >= 60e9) return `${(ns / 60e9).toFixed(1)} min`;
  if (ns >= 1e9) return `${(ns / 1e9).toPrecision(3)} s`;
  if (ns >= 1e6) return `${(ns / 1e6).toPrecision(3)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toPrecision(3)} µs`;
  return `${Math.round(ns)} ns`;
}
