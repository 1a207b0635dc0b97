package svc.console

import data.svc.lib

# METADATA
# title: Console access
# description: |-
#   May this caller use a service's web console? Input: user, roles, console ("retrieval" or "explore").
#   The roles of each console are in data.svc.config.console_roles: the explore console is for svc-user and above
#   (svc-viewer opens the dashboards shared with it, nothing more); the retrieval console is for every known role.
#   Callers without identity or without a known role, and unknown consoles, are denied.
# scope: document
# entrypoint: true
default decision := {"allow": false, "reason": "denied: no rule allowed this console"}

decision := lib.verdict(false, reason) if {
	reason := lib.refusal
} else := lib.verdict(false, concat("", ["denied: unknown console '", requested, "'"])) if {
	not requested in object.keys(roles_by_console)
} else := lib.verdict(true, concat("", ["allowed: role ", role, " may use the ", requested, " console"])) if {
	role := lib.roles_among(allowed_roles)[0]
} else := lib.verdict(false, concat("", ["denied: the ", requested, " console is for [", allowed_list, "]"]))

default requested := ""

requested := input.console if is_string(input.console)

roles_by_console := object.get(lib.config, "console_roles", {})

allowed_roles := [r | some r in roles_by_console[requested]; is_string(r)]

allowed_list := concat(", ", allowed_roles)
