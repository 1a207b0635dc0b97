// @ts-check
// Runs before Scalar's bundle on GET /docs (a same-origin script: the page has no inline one).
//
// 1. zod, inside the bundle, probes `Function('')` to decide whether to compile its parsers; under `script-src
//    'self'` the probe is refused and reported as a CSP violation. zod reads this global before the probe and skips
//    it (its documented `jitless` setting for CSP pages), so nothing is evaluated and nothing is reported.
// 2. The bundle and the Vue components in it add <style> elements (toasts, the theme); only the first carries the
//    page's nonce. Every <style> made by a script of this page gets it: scripts are already trusted ('self'), and a
//    <style> injected into the markup still has no nonce and is refused.
(() => {
  /** @type {any} */ (globalThis).__zod_globalConfig = { jitless: true };
  const nonce = document.querySelector('meta[property="csp-nonce"]')?.getAttribute('content') ?? '';
  const make = Document.prototype.createElement;
  /** @this {Document} @param {string} tag @param {ElementCreationOptions} [options] */
  function createElement(tag, options) {
    const element = make.call(this, tag, options);
    if (element instanceof HTMLStyleElement) element.nonce = nonce;
    return element;
  }
  Document.prototype.createElement = /** @type {typeof make} */ (createElement);
})();
