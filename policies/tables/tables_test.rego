package svc.tables_test

import data.svc.tables

# cases.json beside this file is the one case table for this decision: `opa test policies` loads it as data at its
# folder's path (data.tables), and tests/unit/policy.test.ts runs the same file against the wasm bundle.
cases := data.tables

test_case_table_is_well_formed if {
	count(cases) > 0
	every c in cases {
		is_string(c.name)
		is_object(c.input)
		is_boolean(c.allow)
		is_string(object.get(c, "reason_contains", ""))
	}
}

test_every_case_holds if {
	failures := [{"case": c.name, "got": decided(c)} | some c in cases; not holds(c)]
	print("failing cases:", failures)
	count(failures) == 0
}

decided(c) := d if {
	d := tables.decision with input as c.input
}

holds(c) if {
	d := decided(c)
	d.allow == c.allow
	startswith(d.reason, prefix(c.allow))
	contains(d.reason, object.get(c, "reason_contains", ""))
}

prefix(true) := "allowed: "

prefix(false) := "denied: "
