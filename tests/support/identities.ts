// The people of the tests, defined once: name, platform role, groups and, for the users of the test realm
// (scripts/keycloak/svc-realm.json, held to this table by tests/unit/identities.test.ts), the password. The
// harnesses' own shapes are projections of these: retrieval's `who`, explore's `as`, the dashboards' SHARING_PEOPLE,
// Keycloak's REALM_USERS.
export type Person = { user: string; role: string; groups: readonly string[]; password?: string };

export const PEOPLE = {
  // the realm: one user of every platform role; ana and abe are both analysts (Trino's rules filter ana's orders)
  ada: { user: 'ada', role: 'svc-admin', groups: ['platform'], password: 'ada-password' },
  eve: { user: 'eve', role: 'svc-engineer', groups: ['data'], password: 'eve-password' },
  ana: { user: 'ana', role: 'svc-analyst', groups: ['finance'], password: 'ana-password' },
  abe: { user: 'abe', role: 'svc-analyst', groups: ['data'], password: 'abe-password' },
  uma: { user: 'uma', role: 'svc-user', groups: ['finance', 'ops'], password: 'uma-password' },
  vic: { user: 'vic', role: 'svc-viewer', groups: ['ops'], password: 'vic-password' },
  // a caller whose role no policy knows
  sam: { user: 'sam', role: 'made-up-role', groups: [] },
  // the dashboard-sharing tests: an owner, a user a dashboard is shared with, a member of a group it is shared with
  // (finance), someone else, a viewer and an admin
  olivia: { user: 'olivia', role: 'svc-analyst', groups: [] },
  luke: { user: 'luke', role: 'svc-user', groups: [] },
  gina: { user: 'gina', role: 'svc-user', groups: ['finance', 'ops'] },
  oscar: { user: 'oscar', role: 'svc-analyst', groups: ['marketing'] },
  vera: { user: 'vera', role: 'svc-viewer', groups: [] },
  adam: { user: 'adam', role: 'svc-admin', groups: [] },
  // the retrieval contracts on the lake: an analyst, a user and a viewer whom Trino's rules let read the `iceberg`
  // catalog as eve does (scripts/trino/rules.json), where ana, uma and vic are kept off it
  lia: { user: 'lia', role: 'svc-analyst', groups: [] },
  ugo: { user: 'ugo', role: 'svc-user', groups: [] },
  val: { user: 'val', role: 'svc-viewer', groups: [] },
} as const satisfies Record<string, Person>;

export type RealmUser = 'ada' | 'eve' | 'ana' | 'abe' | 'uma' | 'vic';
export const REALM_USER_NAMES: readonly RealmUser[] = ['ada', 'eve', 'ana', 'abe', 'uma', 'vic'];

/** A caller as the in-process harnesses send it (X-User-Id, X-User-Role), without groups. */
export const roleCaller = (p: Person) => ({ user: p.user, role: p.role });

/** A caller with its groups as the X-User-Groups header carries them (comma-separated), when it has any. */
export const groupCaller = (p: Person): { user: string; role: string; groups?: string } =>
  p.groups.length ? { ...roleCaller(p), groups: p.groups.join(',') } : roleCaller(p);
