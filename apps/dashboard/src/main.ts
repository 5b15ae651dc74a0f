// Dashboard entry: a header with navigation and the token, and a hash router over the pages.
import { setToken, token } from './api.js';
import { h } from './dom.js';
import { fleetPage } from './pages/fleet.js';
import { linkPage } from './pages/link/link-page.js';
import { livePage } from './pages/live.js';
import { reportersPage } from './pages/reporters.js';
import { searchPage } from './pages/search.js';
import { sessionPage } from './pages/session.js';
import { sessionsPage } from './pages/sessions.js';
import { stpPage } from './pages/stp.js';
import { timelinePage } from './pages/timeline/timeline-page.js';
import { valuePlotPage } from './pages/value-plot.js';
import './style.css';

// A token may arrive once in the page URL (?token=...); it is kept in localStorage and removed from the URL.
const initial = new URLSearchParams(location.search);
if (initial.has('token')) {
  setToken(initial.get('token') ?? '');
  history.replaceState(null, '', location.pathname + location.hash);
}

/** A page draws itself into `root` from the URL's parameters, and returns what stops it. */
type Page = (root: HTMLElement, params: URLSearchParams) => () => void;

/** The pages by their hash path (`#/search?...`); any other path is the fleet. */
const PAGES = new Map<string, Page>([
  ['fleet', fleetPage],
  ['live', livePage],
  ['search', searchPage],
  ['timeline', timelinePage],
  ['stp', stpPage],
  ['sessions', sessionsPage],
  ['plot', valuePlotPage],
  ['reporters', reportersPage],
]);

/** The pages of one link or session, whose id follows the path (`#/link/7?...`). */
const ITEM_PAGES = new Map<string, (root: HTMLElement, id: string, params: URLSearchParams) => () => void>([
  ['link', linkPage],
  ['session', sessionPage],
]);

/** The header's links, in their order. */
const NAVIGATION = [
  ['fleet', 'Fleet'],
  ['sessions', 'Sessions'],
  ['live', 'Live'],
  ['search', 'Search'],
  ['timeline', 'Timeline'],
  ['plot', 'Plots'],
  ['stp', 'STP'],
  ['reporters', 'Reporters'],
];

const app = document.querySelector<HTMLDivElement>('#app')!;
const main = h('main', {});
const tokenInput = h('input', { type: 'password', placeholder: 'API token', value: token(), id: 'token' });
tokenInput.addEventListener('change', () => {
  setToken(tokenInput.value);
  route();
});
app.append(
  h(
    'header',
    {},
    h('strong', {}, 'tracehub'),
    ...NAVIGATION.map(([path, label]) => h('a', { href: `#/${path}` }, label)),
    tokenInput,
  ),
  main,
);

let cleanup: () => void = () => {};

function route(): void {
  cleanup();
  main.replaceChildren();
  const hash = location.hash.replace(/^#\/?/, '');
  const [path, query = ''] = hash.split('?');
  const params = new URLSearchParams(query);
  const [page, arg] = path.split('/');
  const itemPage = ITEM_PAGES.get(page);
  if (itemPage) cleanup = itemPage(main, decodeURIComponent(arg ?? ''), params);
  else cleanup = (PAGES.get(page) ?? fleetPage)(main, params);
}

window.addEventListener('hashchange', route);
route();
