import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SHARING_PEOPLE } from '../support/dashboards.ts';
import { as } from '../support/explore.ts';
import { PEOPLE, REALM_USER_NAMES } from '../support/identities.ts';
import { REALM_USERS } from '../support/keycloak.ts';
import { who } from '../support/retrieval.ts';

// The test identities are defined once (tests/support/identities.ts); the realm the identity-chain tests sign in to
// is a file outside tests/, so this holds the two together, and pins the shapes the harnesses' callers take.
type RealmFile = { users: { username: string; realmRoles: string[]; groups: string[]; credentials: { value: string }[] }[] };
const realm = JSON.parse(readFileSync(new URL('../../scripts/keycloak/svc-realm.json', import.meta.url), 'utf8')) as RealmFile;

describe('test identities', () => {
  it('are the users of the test realm, with their roles, groups and passwords', () => {
    const fromRealm = realm.users.map((u) => ({
      user: u.username,
      role: u.realmRoles.join(','),
      groups: u.groups.map((g) => g.replace(/^\//, '')),
      password: u.credentials[0]?.value,
    }));
    expect(fromRealm).toEqual(REALM_USER_NAMES.map((n) => PEOPLE[n]));
    expect(REALM_USERS.uma).toEqual({ password: 'uma-password', role: 'svc-user', groups: ['finance', 'ops'] });
  });

  it('keep the shapes the harnesses send', () => {
    expect(who.engineer).toEqual({ user: 'eve', roles: 'svc-engineer' });
    expect(who.stranger).toEqual({ user: 'sam', roles: 'made-up-role' });
    expect(as.analyst).toEqual({ user: 'ana', role: 'svc-analyst' });
    expect(as.analyst2).toEqual({ user: 'abe', role: 'svc-analyst' });
    expect(SHARING_PEOPLE.member).toEqual({ user: 'gina', role: 'svc-user', groups: 'finance,ops' });
    expect(SHARING_PEOPLE.owner).toEqual({ user: 'olivia', role: 'svc-analyst' });
  });
});
