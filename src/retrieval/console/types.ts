// The retrieval API as the console reads it, from the service's own views, so a change of shape there is a type
// error in console.js (`npm run typecheck`). Types only: never served.
import type { CollectionView } from '../collections.ts';
import type { DocumentView } from '../documents.ts';
import type { QueryResponse } from '../query.ts';
import type { AnswerResponse } from '../answer/index.ts';
import type { Citation } from '../answer/citations.ts';
import type { PageView } from '../pages.ts';
import type { SessionDetail, SessionView } from '../sessions.ts';

export type Collection = CollectionView;
export type CollectionList = { collections: CollectionView[] };
export type DocumentList = { documents: DocumentView[] };
export type { QueryResponse, AnswerResponse, Citation, PageView };
/** The `done` event of a streamed answer. */
export type AnswerDone = Pick<
  AnswerResponse,
  'grounded' | 'model' | 'session_id' | 'audit_id' | 'standalone_question' | 'latency_ms' | 'usage'
>;
export type SessionSummary = SessionView;
export type SessionList = { sessions: SessionView[] };
export type { SessionDetail };
export type { DocumentView } from '../documents.ts';
export type { DocumentFilter } from '../filter.ts';
export type { UploadStatus } from '../upload-progress.ts';
