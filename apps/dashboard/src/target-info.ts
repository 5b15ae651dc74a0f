import { h } from './dom.js';

/** What QS_TARGET_INFO's fields mean, in the order a firmware engineer reads them. */
const ROWS: Array<[key: string, label: string, show?: (v: unknown) => string]> = [
  [
    'version',
    'QP version',
    (v) => (typeof v === 'number' ? `${Math.floor(v / 100)}.${Math.floor(v / 10) % 10}.${v % 10}` : String(v)),
  ],
  ['build', 'build', (v) => String(v).replace(/^(\d{4})(\d\d)(\d\d)_(\d\d)(\d\d)(\d\d)$/, '$1-$2-$3 $4:$5:$6')],
  ['reset', 'reported at', (v) => (v ? 'target reset' : 'target info request')],
  ['bigEndian', 'byte order', (v) => (v ? 'big-endian' : 'little-endian')],
  ['objPtrSize', 'object pointer', bytes],
  ['funPtrSize', 'function pointer', bytes],
  ['sigSize', 'signal', bytes],
  ['eventSize', 'event size', bytes],
  ['timeSize', 'timestamp', bytes],
  ['queueCtrSize', 'queue counter', bytes],
  ['teCtrSize', 'time event counter', bytes],
  ['poolBlkSize', 'pool block size', bytes],
  ['poolCtrSize', 'pool counter', bytes],
  ['maxActive', 'max active objects'],
  ['maxEventPools', 'max event pools'],
  ['maxTickRates', 'max tick rates'],
  [
    'mismatch',
    'matches the decoder settings',
    (v) =>
      v
        ? "no: the target's sizes differ from the link's settings; on the link's page, under Settings, set them to the sizes above (or remove them)"
        : 'yes',
  ],
];

function bytes(v: unknown): string {
  return typeof v === 'number' ? `${v} byte${v === 1 ? '' : 's'}` : String(v);
}

/** camelCase → words, for fields this page does not know. */
const words = (key: string) => key.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

/** The target's description of itself as tables of label and value, side by side; unknown fields follow the known ones. */
export function targetInfoTable(info: Record<string, unknown>): HTMLDivElement {
  const known = new Set(ROWS.map(([k]) => k));
  const rows = ROWS.filter(([k]) => k in info).map(([k, label, show]) =>
    h('tr', { 'data-key': k }, h('th', {}, label), h('td', {}, show ? show(info[k]) : String(info[k]))),
  );
  for (const [k, v] of Object.entries(info))
    if (!known.has(k))
      rows.push(
        h(
          'tr',
          { 'data-key': k },
          h('th', {}, words(k)),
          h('td', {}, typeof v === 'object' ? JSON.stringify(v) : String(v)),
        ),
      );
  const half = Math.ceil(rows.length / 2);
  return h(
    'div',
    { class: 'target-info-tables' },
    h('table', { class: 'kv target-info' }, ...rows.slice(0, half)),
    h('table', { class: 'kv target-info' }, ...rows.slice(half)),
  );
}
