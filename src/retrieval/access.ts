import { forbidden, notFound } from '../platform/errors.ts';
import type { Caller } from '../platform/identity.ts';
import type { Logger } from '../platform/log.ts';
import type { PolicyDecision, PolicyEngine } from '../platform/policy/index.ts';

// Every collection decision goes through the collections policy; nothing here decides by itself.
export type CollectionAction = 'read' | 'query' | 'upload' | 'create' | 'update' | 'delete' | 'delete_document' | 'reindex_document';
/** The document a document action acts on: the policy lets its uploader act on it. */
export type DocumentSubject = { id: string; uploaded_by: string };

export function decideCollection(
  policy: PolicyEngine,
  caller: Caller,
  action: CollectionAction,
  collection: { slug: string; allowed_roles: string[] },
  document?: DocumentSubject,
): Promise<PolicyDecision> {
  return policy.decide('collections', {
    user: caller.user,
    roles: caller.roles,
    action,
    collection: { slug: collection.slug, allowed_roles: collection.allowed_roles },
    ...(document ? { document: { id: document.id, uploaded_by: document.uploaded_by } } : {}),
  });
}

/** A collection the caller may not see does not exist for them: 404, so its name is not revealed. */
export async function requireVisible<C extends { slug: string; allowed_roles: string[] }>(
  policy: PolicyEngine,
  caller: Caller,
  slug: string,
  collection: C | undefined,
): Promise<C> {
  if (!collection || !(await decideCollection(policy, caller, 'read', collection)).allow) {
    throw notFound(`Collection '${slug}' does not exist.`);
  }
  return collection;
}

/**
 * A direct query is refused with 403 (the specification), but with one fixed message: the policy's reason names
 * the roles a collection admits, and a caller who may not see the collection learns nothing about it, not even
 * why. The reason goes to the log for the operator.
 */
export async function requireQueryable(
  deps: { policy: PolicyEngine; logger: Logger },
  caller: Caller,
  collection: { slug: string; allowed_roles: string[] },
): Promise<void> {
  const decision = await decideCollection(deps.policy, caller, 'query', collection);
  if (decision.allow) return;
  deps.logger.info(
    { event: 'retrieval.query_denied', user: caller.user, roles: caller.roles, collection: collection.slug, reason: decision.reason },
    'query denied',
  );
  throw forbidden(`You may not query collection '${collection.slug}'. Ask an administrator for access if you need it.`);
}

/** For a collection the caller can see (requireVisible first): the policy's reason is theirs to read. */
export async function requireAllowed(
  policy: PolicyEngine,
  caller: Caller,
  action: CollectionAction,
  collection: { slug: string; allowed_roles: string[] },
  document?: DocumentSubject,
): Promise<void> {
  const decision = await decideCollection(policy, caller, action, collection, document);
  if (decision.allow) return;
  if (document)
    throw forbidden(`Not allowed to ${action.replace('_', ' ')} ${document.id} of collection '${collection.slug}': ${decision.reason}`);
  throw forbidden(`Not allowed to ${action} collection '${collection.slug}': ${decision.reason}`);
}
