// @ts-check
// Keys every console shares: Enter submits a single-line box (the browser does that for a form), and Ctrl+Enter (or
// Cmd+Enter) submits a multi-line one, where Enter makes a new line.

/** Ctrl+Enter in any textarea of a form submits that form, for textareas already on the page and added later. */
export function ctrlEnterSubmits() {
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' || !(e.ctrlKey || e.metaKey) || e.defaultPrevented) return;
    const box = e.target;
    if (!(box instanceof HTMLTextAreaElement) || !box.form) return;
    e.preventDefault();
    box.form.requestSubmit();
  });
}
