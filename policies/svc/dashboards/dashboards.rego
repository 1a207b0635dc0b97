package svc.dashboards

import data.svc.lib

# METADATA
# title: Dashboard access
# description: |-
#   May this caller view, share or delete this dashboard? Input: user, roles, groups, action, dashboard.
#   view    the owner; administrators (data.svc.config.admin_roles) always; then by visibility: users (the listed
#           users), groups (members of a listed group), public (every caller, except one holding a role in
#           public_excluded_roles, svc-viewer, who needs to be named: listed, or in a listed group).
#   share   the owner only, administrators included in the refusal: sharing decides who sees the owner's data.
#   delete  the owner, an administrator, or a user listed in allowed_users, whatever the visibility.
#   Unknown actions and visibilities, and callers without identity or a known role, are denied everything.
# scope: document
# entrypoint: true
default decision := {"allow": false, "reason": "denied: no rule allowed this action"}

decision := lib.verdict(false, reason) if {
	reason := lib.refusal
} else := lib.verdict(false, concat("", ["denied: unknown action '", action, "'"])) if {
	not action in {"view", "share", "delete"}
} else := lib.verdict(false, concat("", ["denied: unknown visibility '", visibility, "'"])) if {
	not visibility in {"private", "users", "groups", "public"}
} else := lib.verdict(true, "allowed: the caller owns the dashboard") if {
	is_owner
} else := lib.verdict(false, "denied: only the owner can share a dashboard") if {
	action == "share"
} else := lib.verdict(true, "allowed: administrator") if {
	lib.is_admin
} else := delete_decision if {
	action == "delete"
} else := view_decision

delete_decision := lib.verdict(true, "allowed: the caller is on the dashboard's allowed users") if {
	is_listed_user
} else := lib.verdict(false, "denied: only the owner, an administrator or an allowed user can delete a dashboard")

view_decision := lib.verdict(true, "allowed: the dashboard is shared with the caller") if {
	visibility == "users"
	is_listed_user
} else := lib.verdict(true, concat("", ["allowed: the caller is a member of group ", shared_groups[0]])) if {
	visibility == "groups"
	count(shared_groups) > 0
} else := public_decision if {
	visibility == "public"
} else := lib.verdict(false, "denied: the dashboard is private to its owner") if {
	visibility == "private"
} else := lib.verdict(false, "denied: the dashboard is not shared with the caller")

public_decision := lib.verdict(true, "allowed: the dashboard is public") if {
	count(excluded_roles) == 0
} else := lib.verdict(true, "allowed: the public dashboard names the caller") if {
	is_listed_user
} else := lib.verdict(true, concat("", ["allowed: the public dashboard names the caller's group ", group])) if {
	group := shared_groups[0]
} else := lib.verdict(false, concat("", ["denied: public dashboards are not open to ", excluded_roles[0]]))

default action := ""

action := input.action if is_string(input.action)

default dashboard := {}

dashboard := input.dashboard if is_object(input.dashboard)

default visibility := ""

visibility := dashboard.visibility if is_string(dashboard.visibility)

is_owner if dashboard.owner == input.user

is_listed_user if input.user in listed("allowed_users")

caller_groups := [g | is_array(input.groups); some g in input.groups; is_string(g)]

shared_groups := sort([g | some g in caller_groups; g in listed("allowed_groups")])

default listed(_) := []

listed(field) := dashboard[field] if is_array(dashboard[field])

excluded_roles := lib.roles_among(object.get(lib.config, "public_excluded_roles", ["svc-viewer"]))
