// @ts-check
// The MLflow REST API as the page calls it (under ajax-api/2.0/mlflow/, like every other client's), typed by
// endpoint: `api('GET', 'runs/get', ...)` answers a Responses['runs/get']; api3() calls MLflow 3's endpoints (traces)
// under ajax-api/3.0/mlflow/ the same way.

/** @typedef {import('./types.ts').Responses} Responses */
/** @typedef {import('./types.ts').Endpoint} Endpoint */
/** @typedef {import('./types.ts').Responses3} Responses3 */
/** @typedef {import('./types.ts').Endpoint3} Endpoint3 */
/** @typedef {import('./types.ts').PagedEndpoint} PagedEndpoint */
/** @typedef {import('./types.ts').Run} Run */
/** @typedef {'GET' | 'POST' | 'PATCH' | 'DELETE'} Method */
/**
 * A GET's or DELETE's query parameters (a list repeats the key; null, undefined and '' are left out) or a POST's or
 * PATCH's JSON body (which may also hold lists of objects, as traces/search's locations).
 * @typedef {Record<string, string | number | boolean | readonly string[] | readonly Record<string, unknown>[] | null | undefined>} Params
 */

export const API = 'ajax-api/2.0/mlflow/';
export const API3 = 'ajax-api/3.0/mlflow/';
/** What a list asks for at a time. */
export const PAGE_SIZE = 100;

export class ApiError extends Error {}

/**
 * @template {Endpoint} E
 * @param {Method} method
 * @param {E} endpoint
 * @param {Params} [params]
 * @returns {Promise<Responses[E]>}
 */
export const api = (method, endpoint, params = {}) => /** @type {Promise<Responses[E]>} */ (call(API, method, endpoint, params));

/**
 * @template {Endpoint3} E
 * @param {Method} method
 * @param {E} endpoint
 * @param {Params} [params]
 * @returns {Promise<Responses3[E]>}
 */
export const api3 = (method, endpoint, params = {}) => /** @type {Promise<Responses3[E]>} */ (call(API3, method, endpoint, params));

/**
 * One call: a GET's or DELETE's parameters go in the query (as MLflow's server reads them), a POST's or PATCH's (the
 * registry's updates) as a JSON body.
 * @param {string} base
 * @param {Method} method
 * @param {string} endpoint
 * @param {Params} params
 * @returns {Promise<unknown>}
 */
async function call(base, method, endpoint, params) {
  let url = base + endpoint;
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json' };
  /** @type {RequestInit} */
  const init = { method, headers };
  if (method === 'GET' || method === 'DELETE') {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value === undefined || value === null || value === '') continue;
      for (const v of Array.isArray(value) ? value : [value]) query.append(key, String(v));
    }
    const qs = query.toString();
    if (qs) url += `?${qs}`;
  } else {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(params);
  }
  const res = await fetch(url, init);
  const text = await res.text();
  /** @type {{ error_code?: string, message?: string }} */
  let data = {};
  try {
    data = text ? JSON.parse(text) : {};
  } catch {
    data = { message: text.slice(0, 300) };
  }
  if (!res.ok) {
    const code = data.error_code ? ` (${data.error_code})` : '';
    throw new ApiError(`${method} ${endpoint}: ${data.message || `${res.status} ${res.statusText}`}${code}`);
  }
  return data;
}

/**
 * Every page of a paged GET, concatenated (`pick` finds the list in a page).
 * @template {PagedEndpoint} E
 * @template T
 * @param {E} endpoint
 * @param {Params} params
 * @param {(page: Responses[E]) => T[] | undefined} pick
 * @param {number} [limit]
 * @returns {Promise<T[]>}
 */
export async function allPages(endpoint, params, pick, limit = 10_000) {
  /** @type {T[]} */
  const items = [];
  /** @type {string | undefined} */
  let token;
  do {
    const page = await api('GET', endpoint, { ...params, page_token: token });
    items.push(...(pick(page) ?? []));
    token = page.next_page_token;
  } while (token && items.length < limit);
  return items;
}

/**
 * A run's file, through get-artifact: it resolves the run's own root (proxied or written out under the store's root).
 * @param {Run} run
 * @param {string} path
 */
export const artifactHref = (run, path) => `${API}get-artifact?${new URLSearchParams({ run_id: run.info.run_id, path })}`;
