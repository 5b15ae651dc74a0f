import { searchPage } from './search.js';

/** STP traffic by master and channel: the search page narrowed to STP records. */
export function stpPage(root: HTMLElement, params: URLSearchParams): () => void {
  return searchPage(root, params, ['rig', 'link', 'master', 'channel', 'name', 'text'], 'STP by master / channel', {
    protocol: 'stp',
  });
}
