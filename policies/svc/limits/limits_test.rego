package svc.limits_test

import data.svc.lib_test
import data.svc.limits

# cases.json beside this file is the one case table of this decision: `opa test` loads it at data.svc.limits.cases,
# and tests/unit/policy.test.ts runs the same file against the wasm build.
test_case_table_is_well_formed if lib_test.well_formed(limits.cases)

# One sub-test per case, named after it.
test_case[c.name] if {
	some c in limits.cases
	decision := limits.decision with input as c.input
	lib_test.holds(c, decision)
}
