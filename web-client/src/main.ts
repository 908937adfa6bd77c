/** The demo app: a header with the server's address, a page per demo, chosen by `#/path`. */
import { DEFAULT_SERVER, serverUrl } from './connection';
import { h, replace } from './dom';
import type { Page } from './page';
import { aesPage } from './pages/aes';
import { anyServicePage } from './pages/any-service';
import { editDistancePage } from './pages/edit-distance';
import { hammingPage } from './pages/hamming';
import { smithWatermanPage } from './pages/smith-waterman';
import { tsFunctionPage } from './pages/ts-function';
import './style.css';

const PAGES: Page[] = [hammingPage, editDistancePage, aesPage, smithWatermanPage, tsFunctionPage, anyServicePage];

function currentPage(): Page {
  const path = location.hash.replace(/^#\/?/, '');
  return PAGES.find((p) => p.path === path) ?? PAGES[0];
}

/** The server field: changing it reloads the page with `?server=…`, so the address is shareable. */
function serverForm(): HTMLElement {
  const input = h('input', { type: 'text', value: serverUrl(), spellcheck: 'false', 'data-testid': 'server-url', 'aria-label': 'server address', placeholder: DEFAULT_SERVER });
  const use = (ev: Event) => {
    ev.preventDefault();
    const url = new URL(location.href);
    const value = input.value.trim();
    if (!value || value === DEFAULT_SERVER) url.searchParams.delete('server');
    else url.searchParams.set('server', value);
    location.assign(url.toString());
  };
  return h('form', { class: 'server', onsubmit: use }, h('label', {}, 'Server ', input), h('button', { type: 'submit', class: 'secondary' }, 'Use'));
}

function render(): void {
  const page = currentPage();
  const main = h('main', { 'data-page': page.path });
  const nav = h('nav', {}, ...PAGES.map((p) => h('a', { href: `#/${p.path}`, 'aria-current': p === page ? 'page' : undefined }, p.title)));
  replace(
    document.getElementById('app')!,
    h('header', {}, h('div', { class: 'brand' }, h('h1', {}, 'Garblet'), h('p', {}, 'Two-party computation between this browser and a server, with garbled circuits')), serverForm()),
    nav,
    main,
    h('footer', {}, 'The server garbles natively; this browser evaluates in WebAssembly in a worker. Each side learns the agreed output and nothing else; the server checks what this page sends, and this page trusts the server to garble the function it announces — unless you switch on the protection from a cheating server (private AES, Hamming distance, edit distance).'),
  );
  page.mount(main);
  document.title = `${page.title} — Garblet`;
}

addEventListener('hashchange', render);
render();
