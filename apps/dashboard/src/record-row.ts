import type { TraceRecord } from '@tracehub/contracts';
import { hostTime } from './dom.js';

export const ROW_HEIGHT = 22;

/**
 * One record as a list row: host time, the target's time when the record has one (QS stamps
 * unwrapped, STP's STM timestamps; in ticks, `t=`), rig/link, name, text. Sets text only (no
 * HTML parsing).
 */
export function renderRecordRow(r: TraceRecord, el: HTMLDivElement): void {
  el.className = `vrow kind-${r.kind}`;
  el.dataset.seq = String(r.seq);
  // The unwrapped time where the decoder wrote one, else the record's own stamp.
  const ticks = r.targetTime ?? r.targetTs;
  const target = ticks === undefined || ticks === null ? '' : `t=${ticks}  `;
  el.textContent = `${hostTime(r.hostNs)}  ${target}${r.rig}/${r.link}  #${r.seq}  ${r.name.padEnd(24)} ${r.text.split('\n')[0]}`;
  el.title = r.text;
}
