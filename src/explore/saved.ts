import { randomUUID } from 'node:crypto';
import { conflict, notFound } from '../platform/errors.ts';
import type { Sql } from '../platform/db/index.ts';
import type { Caller } from '../platform/identity.ts';
import * as store from './store.ts';

// Saved questions: the caller's own list of a title, the SQL (and the question it came from), and a chart choice kept
// for the console. Only the owner sees, lists or deletes one: another user's id is the same 404 as an unknown one.
// Running a saved question is POST /query with its SQL, through every step of the pipeline again.

/** The most saved questions one person keeps: past it, delete some first. */
export const SAVED_LIMIT = 500;

export type SavedInput = { title: string; question?: string | undefined; sql: string; chart?: store.Chart | undefined };
export type SavedView = Omit<store.SavedRow, 'created_at'> & { created_at: string };

const view = (row: store.SavedRow): SavedView => ({ ...row, created_at: new Date(row.created_at).toISOString() });

export async function saveQuestion(db: Sql, caller: Caller, input: SavedInput): Promise<SavedView> {
  if ((await store.countSaved(db, caller.user)) >= SAVED_LIMIT)
    throw conflict(`You have ${SAVED_LIMIT} saved questions, the most one person keeps; delete some first (DELETE /saved/{id}).`);
  const row = await store.insertSaved(db, {
    id: randomUUID(),
    owner: caller.user,
    title: input.title,
    question: input.question ?? null,
    sql: input.sql,
    chart: input.chart ?? null,
  });
  return view(row);
}

export async function listSavedOf(db: Sql, caller: Caller): Promise<SavedView[]> {
  return (await store.listSaved(db, caller.user, SAVED_LIMIT)).map(view);
}

export async function deleteSavedOf(db: Sql, caller: Caller, id: string): Promise<{ deleted: string }> {
  if (!(await store.deleteSaved(db, caller.user, id))) throw notFound(`Saved question '${id}' does not exist.`);
  return { deleted: id };
}
