-- Prints one machine-readable line after a wrk run (sourced by call.lua too):
--   RESULT requests=N seconds=S rps=R p50_us=A p99_us=B errors=E non2xx=F
function done(summary, latency, requests)
   local seconds = summary.duration / 1e6
   local e = summary.errors
   io.write(string.format(
      "RESULT requests=%d seconds=%.2f rps=%.0f p50_us=%d p99_us=%d errors=%d non2xx=%d\n",
      summary.requests, seconds, summary.requests / seconds,
      latency:percentile(50), latency:percentile(99),
      e.connect + e.read + e.write + e.timeout, e.status))
end
