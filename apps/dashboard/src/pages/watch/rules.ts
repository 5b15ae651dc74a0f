import type { BacktestResult, Rule, RuleInput } from '@tracehub/api-contract';
import { getJson, postJson } from '../../api.js';
import { h, headedTable } from '../../dom.js';

/** The last hour, as a backtest's query. */
function lastHour(): string {
  const to = new Date();
  const from = new Date(to.getTime() - 3_600_000);
  return `from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}`;
}

const conditionText = (r: Rule) => JSON.stringify(r.condition);
const scopeText = (r: Rule) =>
  Object.entries(r.scope)
    .map(([k, v]) => `${k}: ${(v as string[]).join(', ')}`)
    .join('; ') || 'every link';

/**
 * The watch rules: each with its condition, scope, the process judging it and its firing
 * alerts, and a preview of what it fired over the last hour (a backtest); a form adds one,
 * and previews the rule it holds before it is added.
 */
export function rulesPage(root: HTMLElement): () => void {
  const { table, body } = headedTable({ class: 'fleet', id: 'rules' }, [
    'rule',
    'condition',
    'scope',
    'firing',
    'judged by',
    'silenced until',
    '',
  ]);
  const status = h('p', { class: 'status', id: 'rules-status' });
  const preview = h('section', { id: 'rule-preview' });
  const error = h('p', { class: 'problem', hidden: true });

  /** What a rule (saved: by its id; being edited: its definition in the body) fired over the last hour. */
  const showPreview = async (rule: Pick<Rule, 'name'> & ({ id: string } | { input: RuleInput })) => {
    preview.replaceChildren(h('h3', {}, `${rule.name}: the last hour`), h('p', { class: 'status' }, 'evaluating…'));
    try {
      const result =
        'input' in rule
          ? await postJson<BacktestResult>(`/rules/backtest?${lastHour()}`, rule.input)
          : await postJson<BacktestResult>(`/rules/${encodeURIComponent(rule.id)}/backtest?${lastHour()}`);
      const found = headedTable({ class: 'fleet', id: 'preview-alerts' }, [
        'rig / link',
        'at',
        'resolved',
        'record',
        '',
      ]);
      for (const a of result.alerts) {
        const record = a.session === null ? '' : `${a.session}${a.seq === null ? '' : ` #${a.seq}`}`;
        found.body.append(
          h(
            'tr',
            {},
            h('td', {}, `${a.rig} / ${a.link}`),
            h('td', {}, a.at.slice(0, 23).replace('T', ' ')),
            h('td', {}, a.resolvedAt ? a.resolvedAt.slice(11, 23) : 'still'),
            h('td', {}, record),
            h(
              'td',
              {},
              a.session
                ? h(
                    'a',
                    { href: `#/session/${encodeURIComponent(a.session)}?seq=${a.seq ?? 0}&after=${(a.seq ?? 0) - 1}` },
                    'open',
                  )
                : '',
            ),
          ),
        );
      }
      preview.replaceChildren(
        h('h3', {}, `${rule.name}: the last hour`),
        h(
          'p',
          { class: 'status' },
          `${result.alerts.length} alerts it would have raised, from ${result.records.toLocaleString('en')} records of ${result.sessions} sessions`,
        ),
        found.table,
      );
    } catch (e) {
      preview.replaceChildren(h('p', { class: 'problem' }, (e as Error).message));
    }
  };

  const load = async () => {
    try {
      const { rules } = await getJson<{ rules: Rule[] }>('/rules');
      body.replaceChildren(
        ...rules.map((r) =>
          h(
            'tr',
            { 'data-rule': r.id },
            h('td', {}, h('strong', {}, r.name), h('br', {}), h('small', {}, r.id)),
            h('td', {}, h('code', {}, conditionText(r))),
            h('td', {}, scopeText(r)),
            h(
              'td',
              { class: r.firing > 0 ? 'num bad' : 'num' },
              h('a', { href: `#/alerts?rule=${encodeURIComponent(r.id)}` }, String(r.firing)),
            ),
            h('td', {}, r.evaluatedBy ?? 'nobody yet'),
            h('td', {}, r.silencedUntil ? r.silencedUntil.slice(0, 19).replace('T', ' ') : ''),
            h(
              'td',
              {},
              h('button', { type: 'button', class: 'preview', onclick: () => showPreview(r) }, 'preview last hour'),
            ),
          ),
        ),
      );
      status.textContent = `${rules.length} rules`;
      error.hidden = true;
    } catch (e) {
      error.textContent = (e as Error).message;
      error.hidden = false;
    }
  };

  const name = h('input', { name: 'name', placeholder: 'name', required: true });
  const preset = h(
    'select',
    { name: 'preset' },
    h('option', { value: '' }, 'condition below'),
    h('option', { value: 'qs-assert' }, 'preset: QS assertion'),
    h('option', { value: 'stp-errors' }, 'preset: STP error markers'),
  );
  const condition = h('input', { name: 'condition', size: 48, placeholder: '{"kind":"silent","seconds":30}' });
  const rigs = h('input', { name: 'rigs', placeholder: 'rig globs, comma-separated' });
  /** The rule the form holds (a condition that is not JSON throws). */
  const inputOf = (): RuleInput => {
    const input: RuleInput = { name: name.value || 'unsaved rule' };
    if (preset.value) input.preset = preset.value as RuleInput['preset'];
    else input.condition = JSON.parse(condition.value);
    const globs = rigs.value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (globs.length > 0) input.scope = { rigs: globs };
    return input;
  };
  // The rule being edited, tried over the last hour before it is added.
  const tryIt = h('button', { type: 'button', id: 'preview-unsaved' }, 'Preview last hour');
  tryIt.addEventListener('click', async () => {
    try {
      const input = inputOf();
      error.hidden = true;
      await showPreview({ name: `${input.name} (not saved)`, input });
    } catch (e) {
      error.textContent = (e as Error).message;
      error.hidden = false;
    }
  });
  const form = h(
    'form',
    { id: 'add-rule', class: 'filters' },
    name,
    preset,
    condition,
    rigs,
    tryIt,
    h('button', { type: 'submit' }, 'Add rule'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      const added = await postJson<Rule>('/rules', inputOf());
      await load();
      await showPreview(added);
    } catch (e) {
      error.textContent = (e as Error).message;
      error.hidden = false;
    }
  });

  root.append(h('h2', {}, 'Watch rules'), form, error, status, table, preview);
  void load();
  const timer = setInterval(load, 10_000);
  return () => clearInterval(timer);
}
