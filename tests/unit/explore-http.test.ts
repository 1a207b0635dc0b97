import { exploreHttpContract } from '../support/explore-http-contract.ts';
import { exploreHarness } from '../support/explore.ts';

exploreHttpContract((env) => exploreHarness(env));
