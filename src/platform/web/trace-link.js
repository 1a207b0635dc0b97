// @ts-check
// A link from what a request answered to its trace in the tracker's UI (`#/traces?request_id=…&experiment_id=…`,
// which opens the trace whose client_request_id is the request's X-Request-Id). The page says where the tracker is
// in two <meta> tags (trace-links.ts), written only while the platform traces itself: without them there is no link.
import { h } from './dom.js';

/** @param {string} name */
const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? '';

/**
 * The trace page of the request, or null when the page has no tracker to link to or the answer no request id.
 * @param {string | null | undefined} requestId
 */
export function traceHref(requestId) {
  const tracker = meta('svc-tracker-url');
  const experiment = meta('svc-trace-experiment');
  if (!tracker || !experiment || !requestId) return null;
  const query = new URLSearchParams({ request_id: requestId, experiment_id: experiment });
  return `${tracker.replace(/\/+$/, '')}/#/traces?${query}`;
}

/**
 * A "trace" link (in a new tab: the answer stays), or null (traceHref).
 * @param {string | null | undefined} requestId
 */
export function traceLink(requestId) {
  const href = traceHref(requestId);
  return href
    ? h('a', { href, target: '_blank', rel: 'noopener', class: 'trace-link', 'aria-label': `trace of request ${requestId}` }, 'trace')
    : null;
}
