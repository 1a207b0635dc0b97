package svc.tracker

import data.svc.lib

# METADATA
# title: Tracker workspaces and the platform traces
# description: |-
#   Two questions, told apart by the input:
#   With `workspace` (and `action`, "use" or "manage"): may this caller work in that tracker workspace (MLflow's
#   multi-tenant mode: a workspace is what the platform team gives each team), or create, change and delete it?
#   Administrators manage and use every workspace. Anyone else uses a workspace named after one of their groups
#   (X-User-Groups), or one their role is granted in data.svc.config.tracker_workspace_grants.roles (a name, a
#   prefix ending in "*", or "*" for all). Only administrators manage. The tracker asks nothing for the default
#   workspace, which stays open as the tracker always was.
#   Without `workspace`: may this caller read or change the platform's own traces (the tracker experiment
#   SVC_TRACE_EXPERIMENT names, where explore and retrieval record each request)? Input: user, roles, trace_user
#   (absent when the caller asks for every trace of the experiment, as a search does). Administrators read every
#   trace; any other caller with a known role only the traces of their own requests.
#   Callers without identity or without a known role are denied either way.
# scope: document
# entrypoint: true
default decision := {"allow": false, "reason": "denied: no rule allowed this trace"}

decision := lib.verdict(false, reason) if {
	reason := lib.refusal
} else := workspace_decision if {
	asks_workspace
} else := lib.verdict(true, "allowed: administrator") if {
	lib.is_admin
} else := lib.verdict(false, "denied: only administrators read every caller's traces") if {
	not names_user
} else := lib.verdict(true, "allowed: the trace records the caller's own request") if {
	input.trace_user == input.user
} else := lib.verdict(false, "denied: the trace records another user's request")

names_user if is_string(input.trace_user)

asks_workspace if is_string(input.workspace)

workspace_decision := lib.verdict(false, "denied: the workspace action must be use or manage") if {
	not input.action in {"use", "manage"}
} else := lib.verdict(true, "allowed: administrator") if {
	lib.is_admin
} else := lib.verdict(false, "denied: only administrators manage workspaces") if {
	input.action == "manage"
} else := lib.verdict(true, concat("", ["allowed: the caller's group ", ws, " is the workspace"])) if {
	ws in caller_groups
} else := lib.verdict(true, concat("", ["allowed: role ", granted_roles[0], " is granted workspace ", ws])) if {
	count(granted_roles) > 0
} else := lib.verdict(false, concat("", ["denied: no group or role of the caller is granted workspace ", ws]))

ws := input.workspace

# The caller's groups that are strings (X-User-Groups); a workspace named like one is theirs.
caller_groups contains g if {
	is_array(input.groups)
	some g in input.groups
	is_string(g)
}

role_grants := object.get(lib.config, ["tracker_workspace_grants", "roles"], {})

# The caller's known roles granted this workspace, sorted (lib.known_roles is), so a reason names the first.
granted_roles := [r |
	some r in lib.known_roles
	some pattern in object.get(role_grants, r, [])
	grants(pattern, ws)
]

grants("*", _)

grants(pattern, workspace) if pattern == workspace

grants(pattern, workspace) if {
	endswith(pattern, "*")
	startswith(workspace, trim_suffix(pattern, "*"))
}
