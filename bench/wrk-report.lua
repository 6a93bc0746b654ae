-- Prints wrk's totals as one machine-readable line for bench/run.sh.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d bytes=%d duration_us=%d errors=%d p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f\n",
    summary.requests, summary.bytes, summary.duration,
    e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency:percentile(99.9) / 1000))
end
