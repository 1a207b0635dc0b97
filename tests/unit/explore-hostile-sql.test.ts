import { describe } from 'vitest';
import { exploreHarness } from '../support/explore.ts';
import { exploreHostileContract } from '../support/explore-hostile-contract.ts';

// On the embedded engine (PGlite holding the sample): Postgres reads `FROM ONLY t` and unqualified catalog names
// differently from Trino's grammar, which is what these cases try. tests/integration/explore-trino.test.ts runs the
// same cases on Trino.
describe('explore on the embedded engine, against a hostile caller', () => {
  exploreHostileContract((env) => exploreHarness(env));
});
