// Dashboard entry: a header with navigation and the token, and a hash router over the pages.
import { setToken, token } from './api.js';
import { h } from './dom.js';
import { fleetPage } from './pages/fleet.js';
import { linkPage } from './pages/link.js';
import { livePage } from './pages/live.js';
import { searchPage } from './pages/search.js';
import { sessionPage } from './pages/session.js';
import { sessionsPage } from './pages/sessions.js';
import { stpPage } from './pages/stp.js';
import { timelinePage } from './pages/timeline.js';
import './style.css';

// A token may arrive once in the page URL (?token=...); it is kept in localStorage and removed from the URL.
const initial = new URLSearchParams(location.search);
if (initial.has('token')) {
  setToken(initial.get('token') ?? '');
  history.replaceState(null, '', location.pathname + location.hash);
}

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
    h('a', { href: '#/fleet' }, 'Fleet'),
    h('a', { href: '#/sessions' }, 'Sessions'),
    h('a', { href: '#/live' }, 'Live'),
    h('a', { href: '#/search' }, 'Search'),
    h('a', { href: '#/stp' }, 'STP'),
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
  switch (page) {
    case 'live':
      cleanup = livePage(main, params);
      break;
    case 'search':
      cleanup = searchPage(main, params);
      break;
    case 'timeline':
      cleanup = timelinePage(main, params);
      break;
    case 'stp':
      cleanup = stpPage(main, params);
      break;
    case 'sessions':
      cleanup = sessionsPage(main, params);
      break;
    case 'link':
      cleanup = linkPage(main, decodeURIComponent(arg ?? ''), params);
      break;
    case 'session':
      cleanup = sessionPage(main, decodeURIComponent(arg ?? ''), params);
      break;
    default:
      cleanup = fleetPage(main, params);
  }
}

window.addEventListener('hashchange', route);
route();
