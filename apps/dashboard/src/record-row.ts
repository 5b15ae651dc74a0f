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
  const target = r.targetTime === undefined ? '' : `t=${r.targetTime}  `;
  el.textContent = `${hostTime(r.hostNs)}  ${target}${r.rig}/${r.link}  #${r.seq}  ${r.name.padEnd(24)} ${r.text.split('\n')[0]}`;
  el.title = r.text;
}
