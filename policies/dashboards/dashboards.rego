# Dashboard access for one caller and one dashboard. Actions:
#   view   administrators always; the owner always; then by visibility: users (listed users), groups (members of a
#          listed group), public (every authenticated caller except the roles in public_excluded_roles).
#   share  the owner only: sharing changes who sees the owner's data, so no one else may do it.
#   delete the owner, a user listed in allowed_users, or an administrator.
# A caller without identity or without a known role is denied everything.
package dashboards

default decision := {"allow": false, "reason": "denied: no rule allowed this action"}

decision := verdict(false, "denied: no caller identity") if {
	not valid_user
} else := verdict(false, concat("", ["denied: no known role among [", concat(", ", caller_roles), "]"])) if {
	count(known_roles) == 0
} else := verdict(false, concat("", ["denied: unknown action '", action_name, "'"])) if {
	not action_name in {"view", "share", "delete"}
} else := verdict(true, "allowed: the caller owns the dashboard") if {
	is_owner
} else := verdict(true, "allowed: administrator") if {
	action_name in {"view", "delete"}
	is_admin
} else := verdict(false, "denied: only the owner can share a dashboard") if {
	action_name == "share"
} else := delete_decision if {
	action_name == "delete"
} else := view_decision

delete_decision := verdict(true, "allowed: the caller is on the dashboard's allowed users") if {
	is_listed_user
} else := verdict(false, "denied: only the owner or an allowed user can delete a dashboard")

view_decision := verdict(true, "allowed: the dashboard is shared with the caller") if {
	visibility == "users"
	is_listed_user
} else := verdict(true, concat("", ["allowed: the caller is a member of group ", shared_groups[0]])) if {
	visibility == "groups"
	count(shared_groups) > 0
} else := verdict(false, "denied: public dashboards are not open to svc-viewer") if {
	visibility == "public"
	excluded_from_public
} else := verdict(true, "allowed: the dashboard is public") if {
	visibility == "public"
} else := verdict(false, "denied: the dashboard is private to its owner") if {
	visibility == "private"
} else := verdict(false, "denied: the dashboard is not shared with the caller") if {
	visibility in {"users", "groups"}
} else := verdict(false, concat("", ["denied: unknown visibility '", visibility, "'"]))

verdict(allow, reason) := {"allow": allow, "reason": reason}

valid_user if {
	is_string(input.user)
	input.user != ""
}

action_name := input.action if is_string(input.action)

else := ""

visibility := input.dashboard.visibility if is_string(input.dashboard.visibility)

else := ""

caller_roles := [r | some r in input.roles; is_string(r)]

caller_groups := [g | some g in object.get(input, "groups", []); is_string(g)]

known_roles := sort([r | some r in caller_roles; r in data.config.known_roles])

is_owner if input.dashboard.owner == input.user

is_admin if {
	some r in known_roles
	r in data.config.admin_roles
}

is_listed_user if input.user in object.get(input.dashboard, "allowed_users", [])

shared_groups := sort([g | some g in caller_groups; g in object.get(input.dashboard, "allowed_groups", [])])

excluded_from_public if {
	some r in known_roles
	r in data.config.public_excluded_roles
}
