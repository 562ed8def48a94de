-- wrk script for bench/webhook-load.sh: POSTs one AdmissionReview (file in TG_BENCH_BODY,
-- whitespace outside strings removed, as the API server sends compact JSON) and prints one
-- machine-readable line of results at the end.

local function minify_json(text)
  local out = {}
  local in_string, escaped = false, false
  for i = 1, #text do
    local c = text:sub(i, i)
    if in_string then
      out[#out + 1] = c
      if escaped then
        escaped = false
      elseif c == "\\" then
        escaped = true
      elseif c == '"' then
        in_string = false
      end
    elseif c == '"' then
      in_string = true
      out[#out + 1] = c
    elseif not c:match("%s") then
      out[#out + 1] = c
    end
  end
  return table.concat(out)
end

local path = os.getenv("TG_BENCH_BODY")
if path == nil or path == "" then
  error("TG_BENCH_BODY must name the AdmissionReview file to send")
end
local file = assert(io.open(path, "rb"))
local body = minify_json(file:read("*a"))
file:close()

wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json"

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRKSTATS requests=%d duration_us=%d bytes=%d body_bytes=%d connect=%d read=%d write=%d "
      .. "status=%d timeout=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d mean_us=%.1f\n",
    summary.requests, summary.duration, summary.bytes, #body, e.connect, e.read, e.write,
    e.status, e.timeout, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, latency.mean))
end
