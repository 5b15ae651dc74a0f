import type { ControlState } from '@tracehub/api-contract';
import { type CommandSpec, EVENT_TARGETS, type FieldSpec, OBJECT_KINDS } from '../../control-commands.js';
import { h } from '../../dom.js';

type NameList = 'objects' | 'functions' | 'signals' | 'commands';

const NAME_LISTS: Partial<Record<FieldSpec['kind'], NameList>> = {
  object: 'objects',
  signal: 'signals',
  function: 'functions',
  command: 'commands',
};

/**
 * The names of the link's dictionaries, offered where a field takes such a name: one datalist
 * per dictionary, shared by every field of its kind.
 */
export class DictionaryNames {
  /** Where the datalists live (hidden). */
  readonly element = h('div', { hidden: true });
  private readonly lists = new Map<string, HTMLDataListElement>();

  listFor(list: NameList): HTMLDataListElement {
    let d = this.lists.get(list);
    if (!d) {
      d = h('datalist', { id: `names-${list}` });
      this.lists.set(list, d);
      this.element.append(d);
    }
    return d;
  }

  /** The names of the control state, where they changed. */
  show(names: ControlState['names'] = {}): void {
    for (const [list, el] of this.lists) {
      const wanted = names[list] ?? [];
      if (el.childElementCount === wanted.length && [...el.children].every((o, i) => o.textContent === wanted[i]))
        continue;
      el.replaceChildren(...wanted.map((n) => h('option', { value: n }, n)));
    }
  }
}

/** What a command's form hands over when sent: its spec, the form, where its problems go, its button. */
export type SendCommand = (
  spec: CommandSpec,
  form: HTMLFormElement,
  problems: HTMLUListElement,
  button: HTMLButtonElement,
) => void;

/** A command's form: its button, then its fields; a field's problem goes once the field is changed. */
export function commandForm(spec: CommandSpec, names: DictionaryNames, send: SendCommand): HTMLFormElement {
  // Commands without fields sit side by side, as QView's buttons do.
  const form = h('form', {
    class: spec.fields.length === 0 ? 'command bare' : 'command',
    'data-command': spec.command,
    title: spec.title,
  });
  const problems = h('ul', { class: 'field-problems', hidden: true });
  const button = h('button', { type: 'submit' }, spec.label);
  const fields = spec.fields.map((f) => {
    const input = fieldInput(spec, f, names);
    return h(
      'label',
      { class: f.kind === 'check' ? 'check' : '', 'data-field': f.name },
      h('span', {}, f.label),
      input,
    );
  });
  form.append(h('div', { class: 'command-row' }, button, ...fields), problems);
  form.addEventListener('input', (e) => {
    const name = (e.target as HTMLInputElement).name;
    (e.target as HTMLElement).removeAttribute('aria-invalid');
    for (const li of problems.querySelectorAll(`li[data-field="${name}"]`)) li.remove();
    problems.hidden = problems.childElementCount === 0;
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    send(spec, form, problems, button);
  });
  return form;
}

function fieldInput(spec: CommandSpec, f: FieldSpec, names: DictionaryNames): HTMLElement {
  const id = `cmd-${spec.command}-${f.name}`;
  switch (f.kind) {
    case 'objectKind':
      return h('select', { id, name: f.name }, ...OBJECT_KINDS.map((k) => h('option', { value: k }, k)));
    case 'itemSize':
      return h(
        'select',
        { id, name: f.name },
        ...['1', '2', '4'].map((s) => h('option', { value: s }, `${s} byte${s === '1' ? '' : 's'}`)),
      );
    case 'eventTarget': {
      const select = h(
        'select',
        { id, name: f.name },
        ...EVENT_TARGETS.map(([v, label]) => h('option', { value: v }, label)),
      );
      const prio = h('input', {
        id: `${id}-post`,
        name: 'post',
        class: 'narrow',
        placeholder: 'prio',
        'aria-label': 'priority of the AO to post to',
        hidden: true,
      });
      select.addEventListener('change', () => {
        prio.hidden = select.value !== 'post';
      });
      return h('span', { class: 'event-target' }, select, prio);
    }
    case 'check':
      return h('input', { id, name: f.name, type: 'checkbox' });
    default: {
      const list = NAME_LISTS[f.kind];
      const input = h('input', {
        id,
        name: f.name,
        value: f.value ?? '',
        placeholder: f.placeholder ?? (list ? 'name or number' : ''),
        autocomplete: 'off',
        class: f.kind === 'list' ? 'wide' : f.kind === 'number' ? 'narrow' : '',
      });
      if (list) input.setAttribute('list', names.listFor(list).id);
      if (f.help) input.title = f.help;
      return input;
    }
  }
}
