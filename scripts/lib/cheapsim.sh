# Sourced by the client benchmarks in scripts/bench.d: start_cheap_sim starts
# the simulator made as cheap as it can be (1 ms per token, no slowdown with
# load, no queue limit), so that the client is what is measured, on a free
# port of 127.0.0.1. It needs $BIN and $work, sets $sim_pid (stop it in the
# caller's cleanup) and $url, and passes its arguments to the simulator.
start_cheap_sim() {
  "$BIN" simulate --listen 127.0.0.1:0 --any-model --prefill-base 1ms --prefill-per-token 0 \
    --decode-base 1ms --decode-per-running 0 --max-running 100000 --queue-limit 100000 "$@" \
    >"$work/sim.out" 2>"$work/sim.err" &
  sim_pid=$!
  for _ in $(seq 50); do grep -q 'http://' "$work/sim.out" 2>/dev/null && break; sleep 0.1; done
  url=$(grep -o 'http://[0-9.:]*' "$work/sim.out") || { echo "simulator did not start:" >&2; cat "$work/sim.err" >&2; return 1; }
}
