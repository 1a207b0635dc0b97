import type { PlatformConfig } from '../config.ts';

// Where a console links a request to its trace: the tracker's UI (SVC_TRACKER_URL, as a browser reaches it) and the
// experiment the platform's traces go to (SVC_TRACE_EXPERIMENT). The page learns both from two <meta> tags that
// pageRoutes writes into it; trace-link.js builds the link from them and the request id an answer came with.

export type TraceLinks = { trackerUrl: string; experimentId: string };

/** The links' target while the platform traces itself and the tracker's address is known; otherwise none. */
export function traceLinks(platform: Pick<PlatformConfig, 'TRACING_ENABLED' | 'TRACE_EXPERIMENT' | 'TRACKER_URL'>): TraceLinks | undefined {
  if (!platform.TRACING_ENABLED || platform.TRACE_EXPERIMENT === undefined || platform.TRACKER_URL === undefined) return undefined;
  return { trackerUrl: platform.TRACKER_URL, experimentId: platform.TRACE_EXPERIMENT };
}

/** The <meta> tags a page reads them from (names and contents as trace-link.js reads them). */
export const traceLinkMeta = (links: TraceLinks | undefined): Record<string, string> =>
  links ? { 'svc-tracker-url': links.trackerUrl, 'svc-trace-experiment': links.experimentId } : {};
