// Value plots: numeric fields of records (a QS user record's arguments, ...) over a session's
// target time, several series on one chart. The api cuts each series into the chart's pixel
// columns (min and max of each), so a million values draw as fast as a few hundred.
// The URL holds the choice: `#/plot?session=ID&series=PHILO_STAT:values.0&series=...&segment=0&from=&to=`
// (`from`/`to` in ticks of the segment, set by selecting a stretch of the chart).
import type { SeriesReply } from '@tracehub/api-contract';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { getJson, streamUrl } from '../api.js';
import { h } from '../dom.js';
import type { PlotElement } from '../rate-plots.js';
import { writeViewState } from '../view-state.js';

const PALETTE = ['#1d5fa0', '#d9730d', '#2e8b57', '#8e44ad', '#c0392b', '#16a085', '#7f6000', '#d63384'];
const PLOT_HEIGHT = 320;
/** The plot area is narrower than the element by the y axis. */
const Y_AXIS_PX = 70;

/** `NAME:field` of the URL, split at its last colon (record names have none; fields neither). */
function parseSeries(text: string): { name: string; field: string } | undefined {
  const at = text.lastIndexOf(':');
  if (at <= 0 || at === text.length - 1) return undefined;
  return { name: text.slice(0, at), field: text.slice(at + 1) };
}

export function valuePlotPage(root: HTMLElement, params: URLSearchParams): () => void {
  const state = new URLSearchParams(params);
  const session = h('input', { id: 'plot-session', placeholder: 'session id', value: state.get('session') ?? '' });
  const name = h('input', { id: 'plot-name', placeholder: 'record name (PHILO_STAT)' });
  const field = h('input', { id: 'plot-field', placeholder: 'field (values.0)', value: 'values.0' });
  const list = h('ul', { class: 'plot-series', id: 'plot-series' });
  const status = h('p', { class: 'status', id: 'plot-status' });
  const box = h('div', { class: 'plot', id: 'value-plot' }) as PlotElement;
  let generation = 0;

  const save = () => writeViewState('plot', state);
  const add = (e: Event) => {
    e.preventDefault();
    if (!name.value.trim() || !field.value.trim()) return;
    state.append('series', `${name.value.trim()}:${field.value.trim()}`);
    state.set('session', session.value.trim());
    save();
    void load();
  };
  const form = h(
    'form',
    { class: 'bar', onsubmit: add },
    h('label', {}, 'Session ', session),
    h('label', {}, 'Record ', name),
    h('label', {}, 'Field ', field),
    h('button', { type: 'submit' }, 'Add series'),
    h(
      'button',
      {
        type: 'button',
        onclick: () => {
          state.delete('from');
          state.delete('to');
          save();
          void load();
        },
      },
      'Whole segment',
    ),
  );
  root.append(h('h2', {}, 'Value plot'), form, list, status, box);

  async function load(): Promise<void> {
    const mine = ++generation;
    const id = state.get('session') ?? '';
    const chosen = state
      .getAll('series')
      .map(parseSeries)
      .filter((s) => s !== undefined);
    drawList(id, chosen);
    if (id === '' || chosen.length === 0) {
      status.textContent =
        'Pick a session, a record name and a numeric field (a QS user record’s arguments are values.0, values.1, …).';
      return;
    }
    status.textContent = 'Loading…';
    const segment = state.get('segment') ?? '0';
    try {
      // Every series in one request: one pass over the session, one window (the URL's, else
      // from the first value of any series to just after the last), columns that line up.
      const columns = Math.max(50, Math.min(4000, (box.clientWidth || root.clientWidth || 900) - Y_AXIS_PX));
      const q = new URLSearchParams({ segment, columns: String(columns) });
      for (const s of chosen) q.append('series', `${s.name}:${s.field}`);
      for (const k of ['from', 'to']) if (state.has(k)) q.set(k, state.get(k)!);
      const answer = await getJson<SeriesReply>(`/sessions/${encodeURIComponent(id)}/series?${q}`);
      if (mine !== generation) return;
      if (answer.fromTicks === null || answer.toTicks === null) {
        status.textContent = `No numbers in these fields of session ${id}, segment ${segment}.`;
        return;
      }
      const from = BigInt(answer.fromTicks);
      const to = BigInt(answer.toTicks);
      draw(answer, from, to);
      const points = answer.series.reduce((n, a) => n + a.points, 0);
      const span = axisValue(to - from, answer.tickRate);
      status.textContent = `${points.toLocaleString('en')} values in ${columns} columns over ${span.toLocaleString('en')} ${answer.unit === 's' ? 's' : 'ticks'} of target time (segment ${segment}${answer.unit === 'ticks' ? '; set the link’s tickRate for seconds' : ''}). Drag across the chart to zoom.`;
      box.dataset.from = answer.fromTicks;
      box.dataset.to = answer.toTicks;
      box.dataset.points = String(points);
    } catch (e) {
      if (mine !== generation) return;
      status.textContent = (e as Error).message;
    }
  }

  /** The chosen series, each with its CSV and a remove button. */
  function drawList(id: string, chosen: Array<{ name: string; field: string }>): void {
    list.replaceChildren(
      ...chosen.map((s, i) => {
        const q = new URLSearchParams({ series: `${s.name}:${s.field}`, segment: state.get('segment') ?? '0' });
        return h(
          'li',
          { style: `border-left: 4px solid ${PALETTE[i % PALETTE.length]}` },
          `${s.name} ${s.field} `,
          h('a', { href: streamUrl(`/sessions/${encodeURIComponent(id)}/series/export`, q), download: '' }, 'CSV'),
          ' ',
          h(
            'button',
            {
              type: 'button',
              onclick: () => {
                const rest = state.getAll('series').filter((_, j) => j !== i);
                state.delete('series');
                for (const r of rest) state.append('series', r);
                save();
                void load();
              },
            },
            'remove',
          ),
        );
      }),
    );
  }

  /** Each series as a band from its columns' min to max; x is each column's start on the target axis. */
  function draw(answer: SeriesReply, from: bigint, to: bigint): void {
    const { tickRate, columns } = answer;
    const span = to - from;
    const xs = Array.from({ length: columns }, (_, c) =>
      axisValue(from + (span * BigInt(c) + BigInt(columns) - 1n) / BigInt(columns), tickRate),
    );
    const data: Array<Array<number | null>> = [xs];
    const series: uPlot.Series[] = [{ label: tickRate === null ? 'target ticks' : 'target time (s)' }];
    const bands: uPlot.Band[] = [];
    answer.series.forEach((a, i) => {
      const max: Array<number | null> = new Array(columns).fill(null);
      const min: Array<number | null> = new Array(columns).fill(null);
      for (const c of a.columns) {
        max[c.column] = c.max;
        min[c.column] = c.min;
      }
      const color = PALETTE[i % PALETTE.length];
      data.push(max, min);
      // Values far apart (most columns empty) are drawn as points on the line through them.
      const points = { show: a.columns.length < columns / 8, size: 5, fill: color };
      series.push(
        { label: `${a.name} ${a.field} max`, stroke: color, width: 1.5, spanGaps: true, points },
        { label: `${a.name} ${a.field} min`, stroke: color, width: 1, dash: [4, 3], spanGaps: true, points },
      );
      bands.push({ series: [data.length - 2, data.length - 1], fill: `${color}30` });
    });
    box.plot?.destroy();
    const width = Math.max(400, box.clientWidth || 900);
    box.plot = new uPlot(
      {
        width,
        height: PLOT_HEIGHT,
        legend: { live: true },
        cursor: { drag: { x: true, y: false, setScale: false } },
        scales: { x: { time: false } },
        bands,
        axes: [
          { stroke: '#456', grid: { stroke: '#e3e8ee' }, ticks: { stroke: '#c8d0d8' } },
          { stroke: '#456', size: Y_AXIS_PX, grid: { stroke: '#e3e8ee' }, ticks: { stroke: '#c8d0d8' } },
        ],
        series,
        hooks: {
          // A stretch selected: the window becomes that stretch's columns, asked of the api again.
          setSelect: [
            (u) => {
              if (u.select.width < 3) return;
              const left = Math.floor((u.select.left / u.bbox.width) * columns * devicePixelRatio);
              const right = Math.ceil(((u.select.left + u.select.width) / u.bbox.width) * columns * devicePixelRatio);
              const edge = (c: number) => from + (span * BigInt(Math.max(0, Math.min(columns, c)))) / BigInt(columns);
              state.set('from', String(edge(left)));
              state.set('to', String(edge(right)));
              save();
              void load();
            },
          ],
        },
      },
      data as uPlot.AlignedData,
      box,
    );
  }

  queueMicrotask(() => void load());
  return () => {
    generation++;
    box.plot?.destroy();
  };
}

/** A tick count on the plot's axis: seconds with a tick rate, else ticks. */
function axisValue(ticks: bigint, tickRate: number | null): number {
  return tickRate === null ? Number(ticks) : Number(ticks) / tickRate;
}
