// `#/reporters`: the PalmTrace bridge's Reporter endpoints — each with its connection state and
// counters (asked again every 2 s), a form to add one (live, or a replay of a stored session) and
// a button to remove each. Adding and removing need a token with the `control` scope; what the
// api refuses is said in one sentence under the form.
import type { ReportersReply } from '@tracehub/api-contract';
import { deleteResource, getJson, postJson } from '../api.js';
import { h } from '../dom.js';
import { reporterRows } from '../reporters-table.js';

export function reportersPage(root: HTMLElement): () => void {
  const table = h('table', { class: 'fleet reporters', id: 'reporters' });
  const status = h('p', { class: 'status', id: 'reporters-status' }, 'loading…');
  const problem = h('p', { class: 'status problem', id: 'reporter-problem', hidden: true });
  const id = h('input', { id: 'reporter-id', placeholder: 'name (default r1, r2, …)' });
  const host = h('input', { id: 'reporter-host', placeholder: 'host', required: true });
  const port = h('input', {
    id: 'reporter-port',
    placeholder: 'port',
    type: 'number',
    min: 1,
    max: 65535,
    required: true,
  });
  const session = h('input', { id: 'reporter-session', placeholder: 'session to replay (empty: live)' });
  let stopped = false;

  const say = (error: unknown) => {
    problem.hidden = error === null;
    problem.textContent = error === null ? '' : (error as Error).message;
  };
  const load = async () => {
    try {
      const answer = await getJson<ReportersReply>('/reporters');
      if (stopped) return;
      table.replaceChildren(...reporterRows(answer, (name) => void remove(name)));
      status.textContent =
        answer.reporters.length === 0 ? 'No Reporter endpoints.' : `${answer.reporters.length} Reporter endpoints`;
    } catch (e) {
      status.textContent = (e as Error).message;
    }
  };
  const remove = async (name: string) => {
    try {
      await deleteResource(`/reporters/${encodeURIComponent(name)}`);
      say(null);
    } catch (e) {
      say(e);
    }
    await load();
  };
  const add = async (e: Event) => {
    e.preventDefault();
    const body: Record<string, unknown> = { host: host.value.trim(), port: Number(port.value) };
    if (id.value.trim()) body.id = id.value.trim();
    if (session.value.trim()) body.replay = { session: session.value.trim() };
    try {
      await postJson('/reporters', body);
      say(null);
      id.value = '';
      session.value = '';
    } catch (error) {
      say(error);
    }
    await load();
  };
  root.append(
    h('h2', {}, 'PalmTrace Reporters'),
    h(
      'p',
      { class: 'status' },
      'Legacy Palm Reporters the api connects to and sends the fleet’s records (live, or a stored session replayed).',
    ),
    table,
    status,
    h(
      'form',
      { class: 'bar', id: 'reporter-form', onsubmit: (e: Event) => void add(e) },
      h('label', {}, 'Name ', id),
      h('label', {}, 'Host ', host),
      h('label', {}, 'Port ', port),
      h('label', {}, 'Replay ', session),
      h('button', { type: 'submit' }, 'Add Reporter'),
    ),
    problem,
  );
  void load();
  const timer = setInterval(() => void load(), 2000);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
