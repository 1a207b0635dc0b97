package tables_test

import data.tables

# Every case of cases.json (shared with the wasm tests in tests/unit/policy.test.ts) must hold.
test_case_table if {
	count(data.tables.cases) > 0
	failures := [c.name | some c in data.tables.cases; not holds(c)]
	print("failing cases:", failures)
	count(failures) == 0
}

holds(c) if {
	d := tables.decision with input as c.input
	d.allow == c.allow
	contains(d.reason, object.get(c, "reason", ""))
}
