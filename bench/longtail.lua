-- wrk: GET the paths of a file (one a line, bench/longtail.py), drawn with Zipf exponent s
-- (s = 0: uniformly), and count the answers the response cache had kept (X-Cache: hit) and
-- those it served again once checked, stale after a change (X-Cache: revalidated).
-- With a third argument, each line is instead a body POSTed to that path: MCP's tool calls
-- (bench/mcp.py) to /mcp, a result that is a tool error counted as an error.
--   wrk -s bench/longtail.lua URL -- PATHS_FILE S [POST_PATH]
local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("number", counter)
  table.insert(threads, thread)
end

function init(args)
  paths, cdf = {}, {}
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  local s, total = tonumber(args[2]), 0
  for rank = 1, #paths do
    total = total + (s > 0 and 1 / rank ^ s or 1)
    cdf[rank] = total
  end
  for rank = 1, #paths do cdf[rank] = cdf[rank] / total end
  -- Seeded afresh at each run (the clock) and for each thread: with a fixed seed every run
  -- drew the same URLs in the same order as the run before it, so a row after another
  -- (warm after its warm-up, each turn of an A/B) found kept what it asked first because
  -- the run before had just asked for it, whatever the bound kept of a uniform draw.
  math.randomseed(os.time() * 7919 + number * 104729)
  posted = args[3]
  if posted then
    wrk.headers["Accept"] = "application/json, text/event-stream"
    wrk.headers["Content-Type"] = "application/json"
    wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
  end
  hits, revalidated, answers, failed = 0, 0, 0, 0
end

function request()
  local r, low, high = math.random(), 1, #paths
  while low < high do
    local middle = math.floor((low + high) / 2)
    if cdf[middle] < r then low = middle + 1 else high = middle end
  end
  if posted then return wrk.format("POST", posted, nil, paths[low]) end
  return wrk.format("GET", paths[low])
end

function response(status, headers, body)
  answers = answers + 1
  local cache = headers["x-cache"] or headers["X-Cache"]
  if cache == "hit" then hits = hits + 1 end
  if cache == "revalidated" then revalidated = revalidated + 1 end
  if posted and string.find(body, '"isError":true', 1, true) then failed = failed + 1 end
end

function done(summary, latency, requests)
  local kept, checked, total, errors = 0, 0, 0, 0
  for _, thread in ipairs(threads) do
    kept = kept + thread:get("hits")
    checked = checked + thread:get("revalidated")
    total = total + thread:get("answers")
    errors = errors + thread:get("failed")
  end
  io.write(string.format("cache hits: %d of %d, revalidated: %d\n", kept, total, checked))
  if posted then io.write(string.format("tool errors: %d\n", errors)) end
end
