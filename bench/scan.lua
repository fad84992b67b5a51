-- wrk script for door scans: POST {"code": "..."}, a different code every request.
--
--   wrk -t2 -c8 -s bench/scan.lua URL -- CODES_FILE THREADS [COUNT]
--
-- CODES_FILE holds one ticket code a line; the first COUNT of them (default all) are
-- cycled through. Thread n of THREADS sends codes n+1, n+1+THREADS, ..., so in one
-- pass over the list each code is sent once, by one of the threads.

local threads = 0

function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end

function init(args)
  codes = {}
  for line in io.lines(args[1]) do
    codes[#codes + 1] = line
  end
  step = tonumber(args[2])
  count = math.min(tonumber(args[3] or #codes), #codes)
  index = id + 1
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  local code = codes[index]
  index = index + step
  if index > count then
    index = (index - 1) % count + 1
  end
  return wrk.format(nil, nil, nil, '{"code":"' .. code .. '"}')
end
