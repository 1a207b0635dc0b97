# What a decision's case table looks like and when a case holds. Each decision's tests run its cases.json (which
# `opa test` loads at data.svc.<decision>.cases) through these; tests/support/policy-cases.ts holds the wasm build
# and the OPA sidecar to the same tables.
package svc.lib_test

well_formed(cases) if {
	count(cases) > 0
	count({c.name | some c in cases}) == count(cases)
	every c in cases {
		is_string(c.name)
		is_object(c.input)
		is_boolean(c.allow)
		is_string(object.get(c, "reason_contains", ""))
	}
}

holds(c, decision) if {
	decision.allow == c.allow
	startswith(decision.reason, outcome[c.allow])
	contains(decision.reason, object.get(c, "reason_contains", ""))
	limits_hold(c, decision)
}

# A case that names the limits a decision lists (the limits decision) must see exactly those.
limits_hold(c, _) if not "limits" in object.keys(c)

limits_hold(c, decision) if c.limits == decision.limits

outcome := {true: "allowed: ", false: "denied: "}
