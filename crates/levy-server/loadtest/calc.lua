-- wrk script: POST /tax/calculations with the body in calculation.json.
--
--   levy keys new --account bench --keys keys.toml          # note the test key
--   levy serve --table rates.levy --keys keys.toml --ledger bench.sqlite --log warn --rate-limit 0
--   LEVY_KEY=sk_test_... wrk -t2 -c64 -d30s --latency \
--       -s crates/levy-server/loadtest/calc.lua http://127.0.0.1:8787/tax/calculations
--
-- Run wrk from the repository root (the body path is relative to it), or set LEVY_BODY.
local key = os.getenv("LEVY_KEY") or error("set LEVY_KEY to a test key")
local path = os.getenv("LEVY_BODY") or "crates/levy-server/loadtest/calculation.json"
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. key
local f = assert(io.open(path, "r"))
wrk.body = f:read("*a")
f:close()
