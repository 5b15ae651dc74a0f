import type { MarkerReply, UploadReply } from '@tracehub/api-contract';
import { ApiError, type LinkSummary, postJson } from '../../api.js';
import { h } from '../../dom.js';

/**
 * Markers and uploads on a live link, through its gateway (control scope): a user marker with
 * a comment (STP: trace box marker 0x02; QS: a note record), and on STP links the time base
 * (the two 0x03 markers) and the UART upload of a file, on SWD links the file sent as one SWD
 * frame. Each answer (or why not) is shown under the forms.
 */
export function markersPanel(link: LinkSummary): HTMLElement {
  const base = `/links/${link.id}`;
  const result = h('p', { class: 'notice', id: 'marker-result', role: 'status' });
  const say = (text: string, problem = false) => {
    result.textContent = text;
    result.className = problem ? 'problem' : 'notice';
  };
  const ask = async (run: () => Promise<string>) => {
    try {
      say(await run());
    } catch (e) {
      say(e instanceof ApiError ? (e.detail ?? e.message) : (e as Error).message, true);
    }
  };

  const comment = h('input', { name: 'comment', maxlength: '1024', placeholder: 'comment (optional)' });
  const markerForm = h('form', { id: 'marker-form' }, comment, h('button', { type: 'submit' }, 'Set marker'));
  markerForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = (comment as HTMLInputElement).value;
    void ask(async () => {
      const r = await postJson<MarkerReply>(`${base}/markers`, text === '' ? {} : { comment: text });
      return `Marker set in session ${r.session}.`;
    });
  });
  const forms: HTMLElement[] = [markerForm];

  if (link.protocol === 'stp') {
    const offset = h('input', { name: 'offsetNs', pattern: '-?[0-9]{1,18}', placeholder: 'offset, ns', required: '' });
    const timeBase = h('form', { id: 'time-base-form' }, offset, h('button', { type: 'submit' }, 'Set time base'));
    timeBase.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void ask(async () => {
        const r = await postJson<MarkerReply>(`${base}/time-base`, { offsetNs: (offset as HTMLInputElement).value });
        return `Time base set in session ${r.session}.`;
      });
    });
    forms.push(timeBase);
  }
  if (link.protocol !== 'qs') {
    const file = h('input', { name: 'file', type: 'file', required: '' });
    const upload = h('form', { id: 'upload-form' }, file, h('button', { type: 'submit' }, 'Upload to the device'));
    upload.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const chosen = (file as HTMLInputElement).files?.[0];
      if (!chosen) return;
      void ask(async () => {
        const bytes = new Uint8Array(await chosen.arrayBuffer());
        let binary = '';
        for (const b of bytes) binary += String.fromCharCode(b);
        const r = await postJson<UploadReply>(`${base}/upload`, { data: btoa(binary) });
        if (!r.ok) throw new Error(`Upload failed (${r.outcome}): ${r.error}`);
        return `Uploaded ${r.bytes} bytes${r.bitRate === null ? '' : ` at ${r.bitRate} b/s`} in ${r.ms} ms.`;
      });
    });
    forms.push(upload);
  }
  return h(
    'section',
    { class: 'markers-panel', id: 'markers-panel' },
    h('h3', {}, 'Markers and uploads'),
    ...forms,
    result,
  );
}
