// @ts-check
// "Download CSV": POST /query/csv with the statement of the result on screen, saved as a file by the browser. The
// service runs it again through every check and masks what the screen masks.
import { h } from './dom.js';
import { ProblemError } from './problem.js';

/**
 * @param {Record<string, string>} headers the caller's identity
 * @param {{ sql: string }} body
 */
export async function downloadCsv(headers, body) {
  const res = await fetch('/query/csv', {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) {
    const problem = await res.json().catch(() => ({}));
    throw new ProblemError(problem.detail || `${res.status} ${res.statusText}`, problem);
  }
  const url = URL.createObjectURL(await res.blob());
  const link = h('a', { href: url, download: 'explore-result.csv', hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
