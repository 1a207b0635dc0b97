# Table access: may this user, holding these roles, read this table?
# Grants come from data.config.table_grants (per role and per user); a per-user deny wins over any grant.
# Patterns: "*" (every table), "catalog.*" or "catalog.schema.*" (a prefix), or an exact "catalog.schema.table".
package tables

default decision := {"allow": false, "reason": "denied: no rule allowed this table"}

decision := verdict(false, "denied: no caller identity") if {
	not valid_user
} else := verdict(false, "denied: no table named in the request") if {
	not is_string(input.table)
} else := verdict(false, concat("", ["denied: no known role among [", concat(", ", caller_roles), "]"])) if {
	count(known_roles) == 0
} else := verdict(false, concat("", ["denied: table ", table, " is denied to user ", input.user])) if {
	some pattern in object.get(data.config.table_denies.users, input.user, [])
	matches(pattern, table)
} else := verdict(true, concat("", ["allowed: role ", granting_roles[0], " grants ", table])) if {
	count(granting_roles) > 0
} else := verdict(true, concat("", ["allowed: user ", input.user, " is granted ", table])) if {
	some pattern in object.get(data.config.table_grants.users, input.user, [])
	matches(pattern, table)
} else := verdict(false, concat("", ["denied: no role among [", concat(", ", known_roles), "] grants ", table]))

verdict(allow, reason) := {"allow": allow, "reason": reason}

valid_user if {
	is_string(input.user)
	input.user != ""
}

table := lower(input.table)

caller_roles := [r | some r in input.roles; is_string(r)]

known_roles := sort([r | some r in caller_roles; r in data.config.known_roles])

granting_roles := sort([r |
	some r in known_roles
	some pattern in object.get(data.config.table_grants.roles, r, [])
	matches(pattern, table)
])

matches("*", _)

matches(pattern, name) if {
	endswith(pattern, ".*")
	startswith(name, lower(trim_suffix(pattern, "*")))
}

matches(pattern, name) if lower(pattern) == name
