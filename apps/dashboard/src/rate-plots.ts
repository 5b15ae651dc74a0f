// Plots of records/s, errors and gaps per link over a time range (the fleet and link pages),
// drawn with uPlot from the api's `/rates` aggregate.
import type { RatesReply } from '@tracehub/api-contract';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { getJson } from './api.js';
import { h } from './dom.js';
import { RELATIVE_RANGES, resolveTimeRange, timeRangePicker } from './time-range.js';
import { writeViewState } from './view-state.js';

/** `GET /rates`: one series per link, one value per bucket. */
export type RatesAnswer = RatesReply;

/** A plot's element, holding its uPlot: what it draws can be read back (`plot.series`, `plot.data`). */
export interface PlotElement extends HTMLDivElement {
  plot?: uPlot;
}

export interface PlotSeries {
  label: string;
  values: number[];
  color: string;
  /**
   * `area`: steps filled below (a bucket's value holds until the next bucket), for rates;
   * `bars`: a bar per bucket; `steps`: steps unfilled, to be read over bars.
   */
  style: 'area' | 'bars' | 'steps';
}

/** Colours that stay apart on white and from each other, for one series per link. */
const PALETTE = ['#1d5fa0', '#d9730d', '#2e8b57', '#8e44ad', '#c0392b', '#16a085', '#7f6000', '#d63384', '#455a64'];
export const ERROR_COLOR = '#c0392b';
export const GAP_COLOR = '#b36b00';
const PLOT_HEIGHT = 220;

/** The default range of the plots when the URL names none. */
export const DEFAULT_PLOT_RANGE = '1h';

/** Rates per second with a sensible number of digits (0.25, 12.5, 3 400). */
const rateText = (v: number | null) =>
  v === null ? '–' : v >= 100 ? Math.round(v).toLocaleString('en') : String(Math.round(v * 100) / 100);

/** A plot's x value (s since the epoch) as a date uPlot shows in UTC, as every time on the dashboard. */
const utc = (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');

const tickFormats = {
  seconds: uPlot.fmtDate('{HH}:{mm}:{ss}'),
  minutes: uPlot.fmtDate('{HH}:{mm}'),
  days: uPlot.fmtDate('{MM}-{DD} {HH}:{mm}'),
};

/** A time axis label, 24-hour UTC, as precise as the ticks are apart (`step`, s). */
function timeTick(t: number, step: number): string {
  const date = utc(t);
  if (step < 60) return tickFormats.seconds(date);
  return step < 86_400 ? tickFormats.minutes(date) : tickFormats.days(date);
}

/**
 * Draws (or redraws in place, when the series are the same) a time plot of `series` over
 * buckets starting at `timesMs`, with the time axis in UTC as every time on the dashboard.
 */
export function drawPlot(box: PlotElement, timesMs: number[], series: PlotSeries[], yLabel: string): void {
  const data: uPlot.AlignedData = [timesMs.map((t) => t / 1000), ...series.map((s) => s.values)];
  const labels = series.map((s) => s.label).join('\n');
  if (box.plot && box.dataset.series === labels) {
    box.plot.setData(data);
    return;
  }
  box.plot?.destroy();
  box.dataset.series = labels;
  const width = Math.max(400, box.clientWidth || box.parentElement?.clientWidth || 900);
  const stepped = uPlot.paths.stepped?.({ align: 1 });
  const bars = uPlot.paths.bars?.({ size: [0.7, 40], align: 1 });
  box.plot = new uPlot(
    {
      width,
      height: PLOT_HEIGHT,
      tzDate: utc,
      cursor: { drag: { x: false, y: false } },
      legend: { live: true },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [
        {
          stroke: '#456',
          grid: { stroke: '#e3e8ee' },
          ticks: { stroke: '#c8d0d8' },
          values: (_u, ticks, _axis, _space, step) => ticks.map((t) => timeTick(t, step)),
        },
        {
          label: yLabel,
          stroke: '#456',
          size: 60,
          grid: { stroke: '#e3e8ee' },
          ticks: { stroke: '#c8d0d8' },
          values: (_u, ticks) => ticks.map((t) => rateText(t)),
        },
      ],
      series: [
        { label: 'time (UTC)', value: '{YYYY}-{MM}-{DD} {HH}:{mm}:{ss}' },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          // Bars are fill alone, so a bucket of 0 draws nothing rather than a line along the axis.
          width: s.style === 'bars' ? 0 : s.style === 'steps' ? 2 : 1.5,
          fill: s.style === 'bars' ? `${s.color}c0` : s.style === 'area' ? `${s.color}18` : undefined,
          paths: s.style === 'bars' ? bars : stepped,
          points: { show: false },
          value: (_u: uPlot, v: number | null) => rateText(v),
        })),
      ],
    },
    data,
    box,
  );
}

export interface RatePlotsOptions {
  /** The page's path in the URL (`fleet`, `link/3`): the time range is kept in its query. */
  path: string;
  /** `/rates` narrowed to a rig or a link. */
  rig?: string;
  link?: string;
  /** For "all time": since when there are records to show (the rig's or the fleet's first sighting). */
  since: () => Promise<string>;
  /** The plots of one answer: one element per plot, drawn by `draw`. */
  plots: Array<{ id: string; title: string; yLabel: string; series: (answer: RatesAnswer) => PlotSeries[] }>;
}

/**
 * A time-range picker over plots of `/rates`: the range lives in the URL as on the other pages
 * (`range=1h` by default, `range=all`, or `from=&to=`); a relative range is redrawn every 10 s.
 */
export function ratePlots(params: URLSearchParams, options: RatePlotsOptions): { element: HTMLElement; stop(): void } {
  const status = h('span', { class: 'status plot-status' });
  const boxes = options.plots.map((p) => ({
    ...p,
    box: h('div', { class: 'plot', id: p.id }) as PlotElement,
    heading: h('h3', { class: 'plot-title' }, p.title),
  }));
  let range = new URLSearchParams();
  for (const k of ['range', 'from', 'to']) if (params.has(k)) range.set(k, params.get(k)!);
  // With no range in the URL the plots show the last hour, or less when the records began well
  // into it (a lab started a few minutes ago fills the plot rather than a sliver at its right).
  let fitToData = [...range.keys()].length === 0;
  if (fitToData) range.set('range', DEFAULT_PLOT_RANGE);
  let generation = 0;
  let timer: ReturnType<typeof setInterval> | undefined;

  const load = async () => {
    const mine = generation;
    const q = new URLSearchParams();
    if (options.rig) q.set('rig', options.rig);
    if (options.link) q.set('link', options.link);
    const now = Date.now();
    const resolved = range.get('range') === 'all' ? { from: await options.since() } : resolveTimeRange(range, now);
    const to = resolved.to ?? new Date(now).toISOString();
    q.set('from', resolved.from ?? new Date(now - 3_600_000).toISOString());
    q.set('to', to);
    const width = boxes[0].box.clientWidth || 900;
    q.set('buckets', String(Math.min(1000, Math.max(30, Math.floor(width / 6)))));
    try {
      let answer = await getJson<RatesAnswer>(`/rates?${q}`);
      const start = fitToData ? firstRecordsAt(answer) : undefined;
      if (start !== undefined) {
        q.set('from', start);
        answer = await getJson<RatesAnswer>(`/rates?${q}`);
      }
      if (mine !== generation) return;
      const empty = answer.links.length === 0;
      for (const b of boxes) {
        b.box.hidden = empty;
        b.heading.hidden = empty;
        if (!empty) drawPlot(b.box, answer.times, b.series(answer), b.yLabel);
      }
      const seconds = answer.bucketMs / 1000;
      status.textContent = empty
        ? 'No records stored in this range.'
        : `${answer.from.slice(0, 19).replace('T', ' ')} → ${answer.to.slice(0, 19).replace('T', ' ')} UTC, ${answer.times.length} buckets of ${seconds >= 1 ? `${rateText(seconds)} s` : `${rateText(answer.bucketMs)} ms`}`;
      status.classList.toggle('problem', false);
    } catch (e) {
      if (mine !== generation) return;
      status.textContent = (e as Error).message;
      status.classList.toggle('problem', true);
    }
  };
  const run = (next: URLSearchParams, fit = false) => {
    generation++;
    range = next;
    fitToData = fit;
    writeViewState(options.path, range);
    clearInterval(timer);
    const relative = RELATIVE_RANGES.some((r) => r.value === range.get('range')) || range.get('range') === 'all';
    if (relative && !range.has('to')) timer = setInterval(() => void load(), 10_000);
    void load();
  };
  // The picker's "all time" is `range=all` here: with no range at all the plots show the last hour.
  const pickerParams = new URLSearchParams(range);
  if (pickerParams.get('range') === 'all') pickerParams.delete('range');
  const picker = timeRangePicker(pickerParams, (p) => {
    if ([...p.keys()].length === 0) p.set('range', 'all');
    run(p);
  });
  const element = h(
    'section',
    { class: 'rate-plots' },
    h('div', { class: 'bar' }, picker, status),
    ...boxes.flatMap((b) => [b.heading, b.box]),
  );
  // Drawn once the section is in the page, so the plots take its width.
  queueMicrotask(() => run(range, fitToData));
  return {
    element,
    stop: () => {
      generation++;
      clearInterval(timer);
      for (const b of boxes) b.box.plot?.destroy();
    },
  };
}

/**
 * Where the records of an answer begin, when that is well into its range (past its first fifth):
 * the start of the bucket before the first that holds any, for the plots to start there.
 */
function firstRecordsAt(answer: RatesAnswer): string | undefined {
  const first = answer.times.findIndex((_, i) => answer.links.some((l) => l.records[i] > 0));
  if (first < answer.times.length / 5) return undefined;
  return new Date(answer.times[first - 1]).toISOString();
}

/** One series per link: its records per second. */
export function perLinkRates(answer: RatesAnswer): PlotSeries[] {
  return answer.links.map((l, i) => ({
    label: `${l.rig} / ${l.link}`,
    values: l.recordsPerSecond,
    color: PALETTE[i % PALETTE.length],
    style: 'area',
  }));
}
