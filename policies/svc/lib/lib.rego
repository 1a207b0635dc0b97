# What every decision checks before anything else, and the one helper that shapes every decision.
# Reasons are built with concat of strings only: the wasm SDK's sprintf prints values differently from OPA's.
package svc.lib

verdict(allow, reason) := {"allow": allow, "reason": reason}

default config := {}

config := data.svc.config if is_object(data.svc.config)

# Why no decision can be taken for this caller at all; undefined when the configuration and the identity are usable.
refusal := "denied: no policy configuration is loaded (data.svc.config)" if {
	count(config) == 0
} else := "denied: no caller identity" if {
	not valid_user
} else := "denied: the caller holds no role" if {
	count(caller_roles) == 0
} else := concat("", ["denied: unknown role ", concat(", ", caller_roles)]) if {
	count(known_roles) == 0
}

valid_user if {
	is_string(input.user)
	trim_space(input.user) != ""
}

caller_roles := sort([r | is_array(input.roles); some r in input.roles; is_string(r)])

# Roles the platform does not know are ignored; a caller needs at least one known role.
known_roles := [r | some r in caller_roles; r in object.get(config, "known_roles", [])]

# The caller's known roles that appear in the list, sorted, so a reason naming the first is deterministic.
roles_among(list) := [r | some r in known_roles; r in list]

admin_roles := object.get(config, "admin_roles", ["svc-admin"])

is_admin if count(roles_among(admin_roles)) > 0
