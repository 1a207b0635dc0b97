package svc.collections

import data.svc.lib

# METADATA
# title: Collection access
# description: |-
#   May this caller act on a collection of the retrieval service? Input: user, roles, action, collection.
#   read, query     administrators always; an empty allowed_roles is open to every caller with a known role;
#                   otherwise the caller needs one of allowed_roles.
#   upload          whoever may read the collection, unless every role they hold is read-only (svc-viewer).
#   create, update, delete
#                   the roles in data.svc.config.collection_manager_roles (svc-admin, svc-engineer); update is
#                   changing a collection's name, description, allowed roles or watched source.
#   delete_document, reindex_document
#                   one document (input.document.uploaded_by): whoever may upload to the collection, when they
#                   manage collections or uploaded that document themselves.
#   audit           reading every caller's retrievals: administrators.
#   Callers without identity or without a known role, and unknown actions, are denied.
# scope: document
# entrypoint: true
default decision := {"allow": false, "reason": "denied: no rule allowed this action"}

decision := lib.verdict(false, reason) if {
	reason := lib.refusal
} else := read_decision if {
	action in {"read", "query"}
} else := upload_decision if {
	action == "upload"
} else := manage_decision if {
	action in {"create", "update", "delete"}
} else := document_decision if {
	action in object.keys(document_verbs)
} else := lib.verdict(true, "allowed: administrator") if {
	action == "audit"
	lib.is_admin
} else := lib.verdict(false, "denied: only administrators read every caller's retrievals") if {
	action == "audit"
} else := lib.verdict(false, concat("", ["denied: unknown action '", action, "'"]))

read_decision := lib.verdict(true, "allowed: administrator") if {
	lib.is_admin
} else := lib.verdict(false, "denied: the collection's allowed_roles is missing or not a list") if {
	not lists_allowed_roles
} else := lib.verdict(true, "allowed: open collection") if {
	count(input.collection.allowed_roles) == 0
} else := lib.verdict(true, concat("", ["allowed: role ", matching_roles[0], " is allowed"])) if {
	count(matching_roles) > 0
} else := lib.verdict(false, concat("", ["denied: the caller holds none of [", concat(", ", allowed_roles), "]"]))

upload_decision := read_decision if {
	not read_decision.allow
} else := lib.verdict(false, "denied: read-only roles cannot upload") if {
	every r in lib.known_roles {
		r in object.get(lib.config, "read_only_roles", ["svc-viewer"])
	}
} else := lib.verdict(true, "allowed: the caller may read the collection and write")

manage_decision := lib.verdict(true, concat("", ["allowed: role ", managing_roles[0], " manages collections"])) if {
	count(managing_roles) > 0
} else := lib.verdict(false, concat("", ["denied: only [", managers, "] may ", action, " collections"]))

document_decision := upload_decision if {
	not upload_decision.allow
} else := manage_decision if {
	count(managing_roles) > 0
} else := lib.verdict(true, "allowed: the caller uploaded the document") if {
	uploaded_by_caller
} else := lib.verdict(false, concat("", [
	"denied: only the document's uploader or [", managers, "] may ",
	document_verbs[action], " it",
]))

document_verbs := {"delete_document": "delete", "reindex_document": "re-index"}

uploaded_by_caller if {
	is_string(input.document.uploaded_by)
	input.document.uploaded_by == input.user
}

default action := ""

action := input.action if is_string(input.action)

# A builtin applied to an absent input is undefined, so `not is_array(...)` would not hold: check by rule.
lists_allowed_roles if is_array(input.collection.allowed_roles)

# Only strings can match a role; an entry of another type never opens the collection.
allowed_roles := [r | some r in input.collection.allowed_roles; is_string(r)]

matching_roles := lib.roles_among(allowed_roles)

manager_roles := object.get(lib.config, "collection_manager_roles", ["svc-admin", "svc-engineer"])

managers := concat(", ", manager_roles)

managing_roles := lib.roles_among(manager_roles)
