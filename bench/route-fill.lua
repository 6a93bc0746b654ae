-- wrk script for bench/route-reread.sh: each thread asks for its own share of the ids
-- ROUTE_BASE .. ROUTE_BASE + ROUTES - 1 in turn (/vnc/{id}/1k), so that every route gets cached.
counter = 0
local n = tonumber(os.getenv("ROUTES") or "100000")
local base = tonumber(os.getenv("ROUTE_BASE") or "1000000")
local threads = 0

function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

function init(args)
  nthreads = tonumber(os.getenv("FILL_THREADS") or "2") -- as many as wrk's -t
end

function request()
  local id = base + ((counter * nthreads + tid) % n)
  counter = counter + 1
  return wrk.format("GET", "/vnc/" .. id .. "/1k")
end
