// Changes to a statement's text at positions its parse tree gives, applied together so that none shifts another.

export type Edit = { from: number; to: number; text: string };

/** `sql` with every edit applied; edits must not overlap. */
export function applyEdits(sql: string, edits: readonly Edit[]): string {
  return [...edits].sort((a, b) => b.from - a.from).reduce((s, e) => s.slice(0, e.from) + e.text + s.slice(e.to), sql);
}
