package svc.tables

import data.svc.lib

# METADATA
# title: Table access
# description: |-
#   May this caller read catalog.schema.table? Input: user, roles, table.
#   Grants live in data.svc.config.table_grants: per role (minus that role's role_exceptions) and per user. A
#   per-user entry in table_denies wins over every grant, an administrator's included. A pattern is "*" (every
#   table), "catalog.*" (a catalog), or three segments each a name or "*" ("tpch.tiny.*", "tpch.*.supplier", an
#   exact name). Table names and patterns compare case-insensitively; user names compare exactly.
# scope: document
# entrypoint: true
default decision := {"allow": false, "reason": "denied: no rule allowed this table"}

decision := lib.verdict(false, reason) if {
	reason := lib.refusal
} else := lib.verdict(false, "denied: the request names no table") if {
	not names_table
} else := lib.verdict(false, concat("", ["denied: '", input.table, "' is not a catalog.schema.table name"])) if {
	not well_formed
} else := lib.verdict(false, concat("", ["denied: table ", table, " is denied to user ", input.user])) if {
	some pattern in user_patterns("table_denies")
	matches(pattern, table)
} else := lib.verdict(true, concat("", ["allowed: role ", granting_roles[0], " grants ", table])) if {
	count(granting_roles) > 0
} else := lib.verdict(true, concat("", ["allowed: user ", input.user, " is granted ", table])) if {
	some pattern in user_patterns("table_grants")
	matches(pattern, table)
} else := lib.verdict(false, concat("", ["denied: no role among [", concat(", ", lib.known_roles), "] grants ", table]))

# A builtin applied to an absent input is undefined, so `not is_string(input.table)` would not hold: check by rule.
names_table if is_string(input.table)

table := lower(input.table)

parts := split(table, ".")

well_formed if {
	count(parts) == 3
	every p in parts {
		p != ""
		not contains(p, "*")
	}
}

grants := object.get(lib.config, "table_grants", {})

user_patterns(kind) := object.get(object.get(object.get(lib.config, kind, {}), "users", {}), input.user, [])

granting_roles := [r |
	some r in lib.known_roles
	some pattern in object.get(object.get(grants, "roles", {}), r, [])
	matches(pattern, table)
	not excepted(r)
]

excepted(role) if {
	some pattern in object.get(object.get(grants, "role_exceptions", {}), role, [])
	matches(pattern, table)
}

matches(pattern, name) if {
	wanted := segments(lower(pattern))
	got := split(name, ".")
	every i, segment in wanted {
		segment in {"*", got[i]}
	}
}

segments("*") := ["*", "*", "*"]

segments(pattern) := array.concat(p, ["*"]) if {
	p := split(pattern, ".")
	count(p) == 2
	p[1] == "*"
}

segments(pattern) := p if {
	p := split(pattern, ".")
	count(p) == 3
}
