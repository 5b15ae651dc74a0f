import { searchPage } from './search.js';

/** STP traffic by master and channel: the search page narrowed to STP records. */
export function stpPage(root: HTMLElement, params: URLSearchParams): () => void {
  return searchPage(root, params, {
    fields: ['rig', 'link', 'session', 'master', 'channel', 'name', 'text'],
    title: 'STP by master / channel',
    path: 'stp',
    fixed: { protocol: 'stp' },
  });
}
