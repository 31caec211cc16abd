-- wrk script: POST the body in LEVY_BODY with the Authorization header LEVY_AUTH (any
-- scheme: the TaxJar and AvaTax request shapes present keys their own ways). dialects.sh
-- runs it.
local auth = os.getenv("LEVY_AUTH") or error("set LEVY_AUTH to an Authorization header value")
local path = os.getenv("LEVY_BODY") or error("set LEVY_BODY to a JSON body's path")
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = auth
local f = assert(io.open(path, "r"))
wrk.body = f:read("*a")
f:close()
