# Collection access in the retrieval service. Actions:
#   read, query  administrators always; an empty allowed_roles is open to every caller with a known role;
#                otherwise the caller needs one of allowed_roles.
#   upload       whoever may read the collection, unless every role they hold is read-only (svc-viewer).
#   create, delete  the roles in data.config.collection_manager_roles.
#   audit        reading every caller's retrievals: administrators.
# A caller without identity or without a known role is denied everything.
package collections

default decision := {"allow": false, "reason": "denied: no rule allowed this action"}

decision := verdict(false, "denied: no caller identity") if {
	not valid_user
} else := verdict(false, concat("", ["denied: no known role among [", concat(", ", caller_roles), "]"])) if {
	count(known_roles) == 0
} else := read_decision if {
	action_name in {"read", "query"}
} else := upload_decision if {
	action_name == "upload"
} else := manage_decision if {
	action_name in {"create", "delete"}
} else := verdict(true, "allowed: administrator") if {
	action_name == "audit"
	is_admin
} else := verdict(false, "denied: only administrators read every caller's retrievals") if {
	action_name == "audit"
} else := verdict(false, concat("", ["denied: unknown action '", action_name, "'"]))

read_decision := verdict(true, "allowed: administrator") if {
	is_admin
} else := verdict(true, "allowed: open collection") if {
	count(allowed_roles) == 0
} else := verdict(true, concat("", ["allowed: role ", matching_roles[0], " is allowed"])) if {
	count(matching_roles) > 0
} else := verdict(false, concat("", ["denied: the caller holds none of [", concat(", ", allowed_roles), "]"]))

upload_decision := read_decision if {
	not read_decision.allow
} else := verdict(false, "denied: read-only roles cannot upload") if {
	every r in known_roles {
		r in data.config.read_only_roles
	}
} else := verdict(true, "allowed: the caller may read the collection and write")

manage_decision := verdict(true, concat("", ["allowed: role ", managing_roles[0], " manages collections"])) if {
	count(managing_roles) > 0
} else := verdict(false, concat("", ["denied: only [", concat(", ", data.config.collection_manager_roles), "] may ", action_name, " collections"]))

verdict(allow, reason) := {"allow": allow, "reason": reason}

valid_user if {
	is_string(input.user)
	input.user != ""
}

action_name := input.action if is_string(input.action)

else := ""

caller_roles := [r | some r in input.roles; is_string(r)]

known_roles := sort([r | some r in caller_roles; r in data.config.known_roles])

allowed_roles := [r | some r in object.get(input.collection, "allowed_roles", []); is_string(r)]

matching_roles := sort([r | some r in known_roles; r in allowed_roles])

managing_roles := sort([r | some r in known_roles; r in data.config.collection_manager_roles])

is_admin if {
	some r in known_roles
	r in data.config.admin_roles
}
