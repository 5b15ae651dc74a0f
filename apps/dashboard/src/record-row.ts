import type { TraceRecord } from '@tracehub/contracts';
import { hostTime } from './dom.js';

export const ROW_HEIGHT = 22;

/** One record as a list row: time, rig/link, name, text. Sets text only (no HTML parsing). */
export function renderRecordRow(r: TraceRecord, el: HTMLDivElement): void {
  el.className = `vrow kind-${r.kind}`;
  el.dataset.seq = String(r.seq);
  el.textContent = `${hostTime(r.hostNs)}  ${r.rig}/${r.link}  #${r.seq}  ${r.name.padEnd(24)} ${r.text.split('\n')[0]}`;
  el.title = r.text;
}
