package svc.limits

import data.svc.lib

# METADATA
# title: Usage limits
# description: |-
#   Which limit applies to a caller for an action that costs money? Input: user, roles, service, action
#   (e.g. "explore", "question"). The configured limit applies unless data.svc.config.limits.roles names a limit
#   for one of the caller's roles and "<service>.<action>" ("30/h", "off"); then `limits` lists each such role
#   with its limit and the service takes the most generous. Callers without identity or a known role are denied.
# scope: document
# entrypoint: true
default decision := {"allow": false, "reason": "denied: no rule allowed this action"}

decision := lib.verdict(false, reason) if {
	reason := lib.refusal
} else := lib.verdict(false, "denied: the request names no service and action") if {
	requested == ""
} else := object.union(
	lib.verdict(true, concat("", ["allowed: the limit of role ", overrides[0].role, " applies to ", requested])),
	{"limits": overrides},
) if {
	count(overrides) > 0
} else := object.union(
	lib.verdict(true, concat("", ["allowed: the configured limit applies to ", requested])),
	{"limits": []},
)

default requested := ""

requested := concat(".", [input.service, input.action]) if {
	is_string(input.service)
	is_string(input.action)
	input.service != ""
	input.action != ""
}

role_limits := object.get(object.get(lib.config, "limits", {}), "roles", {})

overrides := [{"role": r, "limit": limit} |
	some r in lib.known_roles
	limit := role_limits[r][requested]
	is_string(limit)
]
