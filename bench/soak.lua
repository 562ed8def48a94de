-- wrk script for bench/soak.sh: every request POSTs one of the AdmissionReviews named in
-- TG_SOAK_BODIES (colon-separated files, sent as read) to /mutate or /validate in turn, so the
-- load mixes endpoints and object shapes. Prints one machine-readable line at the end.

local bodies = {}
for path in string.gmatch(os.getenv("TG_SOAK_BODIES") or "", "[^:]+") do
  local file = assert(io.open(path, "rb"))
  bodies[#bodies + 1] = file:read("*a")
  file:close()
end
if #bodies == 0 then
  error("TG_SOAK_BODIES must name at least one AdmissionReview file")
end

local headers = { ["Content-Type"] = "application/json", ["Accept"] = "application/json" }
local paths = { "/mutate", "/validate" }
local counter = 0

function request()
  counter = counter + 1
  local body = bodies[(counter % #bodies) + 1]
  local path = paths[(math.floor(counter / #bodies) % 2) + 1]
  return wrk.format("POST", path, headers, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRKSTATS requests=%d duration_us=%d connect=%d read=%d write=%d status=%d timeout=%d "
      .. "p50_us=%d p99_us=%d max_us=%d\n",
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
