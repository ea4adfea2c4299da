# Sourced by relay-bench/run and run-admission. Every server runs in a session of its own, as a
# service does: nginx gets one by daemonising, the node by setsid. Under the kernel's autogroup
# scheduling (sched_autogroup_enabled) a session is a scheduling group, and groups share the
# cores fairly before their threads do; a node left in the runner's session would share one
# group's share with the generator's threads (docs/benchmark-notes.md, "How it is measured",
# "One scheduling group per server").
own_sessions() { # pids, comma- or space-separated; exits unless each leads its own session
  local pid sid
  for pid in ${1//,/ }; do
    sid=$(ps -o sid= -p "$pid" | tr -d ' ')
    [ "$sid" = "$pid" ] || { echo "bench: process $pid is not in a session of its own (session ${sid:-none})" >&2; exit 1; }
  done
}
