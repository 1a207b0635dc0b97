// @ts-check
// DOM helpers that every web page imports as ./dom.js (each service serves this one file under /ui/). Data only ever
// goes into a page as text nodes or attribute values through h() and svg(): nothing from a server goes through
// innerHTML, and event handlers are attached with addEventListener, never written as inline attributes.

/** @typedef {import('./dom-types.ts').Child} Child */
/** @typedef {import('./dom-types.ts').Attrs} Attrs */

/**
 * Appends children: nodes as they are, anything else as text; arrays are flattened, null, undefined and false skipped.
 * @template {Element} E
 * @param {E} el
 * @param {readonly Child[]} children
 * @returns {E}
 */
export function append(el, children) {
  for (const child of children) {
    if (Array.isArray(child)) append(el, child);
    else if (child === null || child === undefined || child === false) continue;
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/**
 * @template {HTMLElement | SVGElement} E
 * @param {E} el
 * @param {Attrs | undefined} attrs
 * @returns {E}
 */
function setAttrs(el, attrs) {
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') {
      if (!key.startsWith('on')) throw new Error(`attribute ${key} takes a value, not a function`);
      el.addEventListener(key.slice(2), value);
    } else if (typeof value === 'object') {
      if (key !== 'dataset') throw new Error(`attribute ${key} takes a value, not an object`);
      for (const [name, v] of Object.entries(value)) el.dataset[name] = String(v);
    } else el.setAttribute(key, value === true ? '' : String(value));
  }
  return el;
}

/**
 * An HTML element; text children become text nodes.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs, ...children) {
  return append(setAttrs(document.createElement(tag), attrs), children);
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * An SVG element; text children become text nodes.
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...Child} children
 * @returns {SVGElementTagNameMap[K]}
 */
export function svg(tag, attrs, ...children) {
  return append(setAttrs(/** @type {SVGElementTagNameMap[K]} */ (document.createElementNS(SVG_NS, tag)), attrs), children);
}

/**
 * The page's element with this id, of this type: a page without it is a bug that should say so, not a null that
 * every caller checks.
 * @template {HTMLElement} [T=HTMLElement]
 * @param {string} id
 * @param {new (...args: any[]) => T} [type]
 * @returns {T}
 */
export function byId(id, type) {
  const el = document.getElementById(id);
  const want = type ?? HTMLElement;
  if (!(el instanceof want)) throw new Error(`the page has no ${want.name} #${id}`);
  return /** @type {T} */ (el);
}
