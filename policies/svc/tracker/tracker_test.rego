package svc.tracker_test

import data.svc.lib_test
import data.svc.tracker

# cases.json beside this file is the one case table of this decision: `opa test` loads it at data.svc.tracker.cases,
# and tests/unit/policy.test.ts runs the same file against the wasm build.
test_case_table_is_well_formed if lib_test.well_formed(tracker.cases)

# One sub-test per case, named after it.
test_case[c.name] if {
	some c in tracker.cases
	decision := tracker.decision with input as c.input
	lib_test.holds(c, decision)
}
