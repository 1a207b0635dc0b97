package svc.tracker

import data.svc.lib

# METADATA
# title: Trace access
# description: |-
#   May this caller read or change the platform's own traces (the tracker experiment SVC_TRACE_EXPERIMENT names,
#   where explore and retrieval record each request)? Such a trace holds one caller's question, the statement and
#   the passages they were given. Input: user, roles, trace_user (whose request the trace records; absent when the
#   caller asks for every trace of the experiment, as a search does).
#   Administrators read every trace; any other caller with a known role only the traces of their own requests.
#   Callers without identity or without a known role are denied.
# scope: document
# entrypoint: true
default decision := {"allow": false, "reason": "denied: no rule allowed this trace"}

decision := lib.verdict(false, reason) if {
	reason := lib.refusal
} else := lib.verdict(true, "allowed: administrator") if {
	lib.is_admin
} else := lib.verdict(false, "denied: only administrators read every caller's traces") if {
	not names_user
} else := lib.verdict(true, "allowed: the trace records the caller's own request") if {
	input.trace_user == input.user
} else := lib.verdict(false, "denied: the trace records another user's request")

names_user if is_string(input.trace_user)
