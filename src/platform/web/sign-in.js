// @ts-check
// Who calls, in every console's header. Under `svc dev` the page has a sign-in box (#sign-in, which pageRoutes
// leaves out elsewhere): a user name and the roles the policy knows (GET /ui/roles), applied on Enter or the button,
// remembered in localStorage, and sent as the identity headers an ingress would set. Behind an ingress the header
// shows who the ingress says calls (GET /ui/me) and the page sends nothing itself. Until someone is signed in the
// console's <main> stays hidden behind a kind "Sign in to start", so no call that needs an identity is made and no
// error shows.
import { byId, h } from './dom.js';
import { icon } from './icons.js';

/** @typedef {{ user: string, roles: string[] }} Identity */

const STORAGE_KEY = 'svc.identity';

/** @returns {Identity | null} the identity remembered from an earlier sign-in on this origin */
function remembered() {
  try {
    const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null');
    if (saved && typeof saved.user === 'string' && saved.user && Array.isArray(saved.roles)) return saved;
  } catch {
    // a value this page did not write: sign in afresh
  }
  return null;
}

/** @param {string} url */
async function getJson(url) {
  const res = await fetch(url, { headers: { Accept: 'application/json' } });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${res.statusText}`);
  return res.json();
}

/** The console's own <main>, which stays hidden until someone is signed in. */
const consoleMain = () => document.querySelector('main:not(#start)');

/**
 * The panel shown instead of the console's <main> while nobody is signed in (a <main> itself, so the page keeps one).
 * @param {string} text
 */
function showStart(text) {
  const main = consoleMain();
  if (main instanceof HTMLElement) main.hidden = true;
  let start = document.getElementById('start');
  if (!start) {
    start = h('main', { id: 'start', class: 'start' });
    if (main) main.before(start);
    else document.body.append(start);
  }
  start.replaceChildren(h('section', {}, h('h2', {}, 'Sign in to start'), h('p', {}, text)));
}

function hideStart() {
  document.getElementById('start')?.remove();
  const main = consoleMain();
  if (main instanceof HTMLElement) main.hidden = false;
}

/** @param {Identity} who */
const signedInAs = (who) =>
  h(
    'span',
    { id: 'signed-in-as', class: 'signed-in-as' },
    icon('user'),
    h('span', {}, ' Signed in as ', h('strong', {}, who.user)),
    who.roles.length ? h('span', { class: 'roles' }, ` · ${who.roles.join(', ')}`) : null,
  );

/**
 * The sign-in box's form: user, then one role (a select) or several (checkboxes), as `data-roles` on #sign-in says.
 * @param {HTMLFormElement} form
 * @param {string[]} roles
 * @param {boolean} several
 */
function fillForm(form, roles, several) {
  const picker = several
    ? h(
        'span',
        { role: 'group', 'aria-label': 'roles', class: 'role-boxes' },
        roles.map((r) => h('label', {}, h('input', { type: 'checkbox', name: 'roles', value: r }), ` ${r}`)),
      )
    : h(
        'select',
        { id: 'role', name: 'role', 'aria-label': 'role', required: true },
        h('option', { value: '' }, 'role…'),
        roles.map((r) => h('option', { value: r }, r)),
      );
  form.replaceChildren(
    h('input', { id: 'who', name: 'user', type: 'text', placeholder: 'user name', 'aria-label': 'user name', required: true, size: 10 }),
    picker,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  form.hidden = false;
}

/**
 * Sets up the header's identity. `onSignedIn` runs once, when someone is signed in (at load when remembered); signing
 * out reloads the page, so nothing of the last person's stays on screen.
 * @param {(who: Identity) => void} onSignedIn
 * @returns {{ headers: () => Record<string, string> }} the identity headers each call sends (none behind an ingress)
 */
export function signIn(onSignedIn) {
  const form = document.getElementById('sign-in');
  if (!(form instanceof HTMLFormElement)) {
    void showIngressIdentity(onSignedIn);
    return { headers: () => ({}) };
  }
  /** @type {Identity | null} */
  let current = remembered();
  const place = byId('identity');
  const several = form.dataset.roles === 'several';

  /** @param {Identity} who */
  const enter = (who) => {
    current = who;
    form.hidden = true;
    place.append(
      signedInAs(who),
      h(
        'button',
        {
          type: 'button',
          id: 'sign-out',
          onclick: () => {
            localStorage.removeItem(STORAGE_KEY);
            location.reload();
          },
        },
        'Sign out',
      ),
    );
    hideStart();
    // after the console's module has finished evaluating, whose top level calls this before defining what it uses
    queueMicrotask(() => onSignedIn(who));
  };

  if (current) enter(current);
  else {
    showStart(`Choose a user name and ${several ? 'your roles' : 'a role'} at the top of the page, then press Enter or Sign in.`);
    getJson('ui/roles')
      .then((/** @type {{ roles: string[] }} */ list) => {
        fillForm(form, list.roles, several);
        byId('start').firstElementChild?.append(h('p', { class: 'muted' }, `The roles the policy knows: ${list.roles.join(', ')}.`));
      })
      .catch((err) => showStart(`The roles could not be read (${err.message}); reload the page to try again.`));
  }
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const user = String(data.get('user') ?? '').trim();
    if (!user) return;
    const roles = (several ? data.getAll('roles') : [data.get('role')]).flatMap((r) => (typeof r === 'string' && r ? [r] : []));
    const who = { user, roles };
    localStorage.setItem(STORAGE_KEY, JSON.stringify(who));
    enter(who);
  });
  /** @type {() => Record<string, string>} */
  const headers = () => (current ? { 'X-User-Id': current.user, 'X-User-Role': current.roles.join(',') } : {});
  return { headers };
}

/**
 * Behind an ingress: the identity it set, shown; the page's calls carry it without the page's help.
 * @param {(who: Identity) => void} onSignedIn
 */
async function showIngressIdentity(onSignedIn) {
  const place = document.getElementById('identity');
  try {
    const who = /** @type {{ user: string | null, roles: string[] }} */ (await getJson('ui/me'));
    if (!who.user) {
      showStart('This page is opened through the sign-in of your organisation, which tells it who you are.');
      return;
    }
    place?.append(signedInAs({ user: who.user, roles: who.roles }));
    hideStart();
    onSignedIn({ user: who.user, roles: who.roles });
  } catch (err) {
    showStart(`Who you are could not be read (${err instanceof Error ? err.message : String(err)}); reload the page to try again.`);
  }
}
