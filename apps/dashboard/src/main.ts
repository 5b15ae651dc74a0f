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
import { alertsPage } from './pages/watch/alerts.js';
import { comparePage } from './pages/watch/compare.js';
import { startFiringBadges } from './pages/watch/firing-badges.js';
import { rulesPage } from './pages/watch/rules.js';
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
  ['rules', rulesPage],
  ['alerts', alertsPage],
  ['compare', comparePage],
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
  ['compare', 'Compare'],
  ['rules', 'Rules'],
  ['alerts', 'Alerts'],
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

/**
 * What the first screen says without a token: where one comes from and where it goes. The
 * api says in a header when it runs without authentication (API_AUTH=none); then no token is
 * needed, and a banner says that anyone who reaches the dashboard may read and control.
 */
let authNone = false;

function tokenWelcome(): HTMLElement {
  return h(
    'section',
    { class: 'welcome' },
    h('h2', {}, 'Paste your API token to begin'),
    h(
      'p',
      {},
      'This dashboard shows what the tracehub server stores, and the server answers only requests that carry an API token. ',
      'Paste your token into the "API token" box at the top right of this page and press Enter. ',
      'It is kept in this browser, so you do this once.',
    ),
    h(
      'p',
      {},
      'No token yet? Ask whoever runs this tracehub server: tokens are set there in API_TOKENS (a token with "read" lets you look, "read+control" also lets you change link settings and send commands).',
    ),
  );
}

const authBanner = h(
  'div',
  { class: 'auth-banner', hidden: true },
  'No authentication: this server runs with API_AUTH=none, so anyone who can reach it may read every trace and control every link.',
);
app.insertBefore(authBanner, main);
startFiringBadges(app.querySelector<HTMLElement>('header a[href="#/alerts"]')!, main);

let cleanup: () => void = () => {};

function route(): void {
  cleanup();
  main.replaceChildren();
  if (!authNone && token() === '') {
    cleanup = () => {};
    main.append(tokenWelcome());
    return;
  }
  const hash = location.hash.replace(/^#\/?/, '');
  const [path, query = ''] = hash.split('?');
  const params = new URLSearchParams(query);
  const [page, arg] = path.split('/');
  const itemPage = ITEM_PAGES.get(page);
  if (itemPage) cleanup = itemPage(main, decodeURIComponent(arg ?? ''), params);
  else cleanup = (PAGES.get(page) ?? fleetPage)(main, params);
}

window.addEventListener('hashchange', route);
// Health needs no token: its reply says whether the api asks for one at all.
fetch('/healthz')
  .then((res) => {
    authNone = res.headers.get('x-tracehub-auth') === 'none';
    authBanner.hidden = !authNone;
  })
  .catch(() => {})
  .finally(route);
