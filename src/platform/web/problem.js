// @ts-check
// How the retrieval and explore consoles call their service: JSON in and out, and a refusal thrown as the
// problem+json `detail` the service wrote, with the whole body kept for pages that show more of it.

export class ProblemError extends Error {
  /**
   * @param {string} message
   * @param {{ detail?: string } & Record<string, unknown>} body the problem+json document (empty when there was none)
   */
  constructor(message, body) {
    super(message);
    this.body = body;
  }
}

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} body sent as JSON when given
 * @param {Record<string, string>} headers
 * @param {(res: Response) => void} [answered] sees the response first (its X-Request-Id, say)
 * @returns {Promise<unknown>} the answer's JSON
 */
export async function callJson(method, path, body, headers, answered) {
  const res = await fetch(path, {
    method,
    headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
  });
  answered?.(res);
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new ProblemError(data.detail || `${res.status} ${res.statusText}`, data);
  return data;
}
