--[[
check_listings.lua -- check the captions of the code in a rendered page.

docs/build.sh runs it on every page it wrote, from the repository root:

    pandoc -f html -t plain --lua-filter docs/check_listings.lua \
           docs/site/ch2.html -o /dev/null

docs/include.lua puts a caption above each block of code it includes:

    chapters/ch2_attention/attention.c, lines 13–29 · region softmax

This filter reads the finished page back and checks each caption
against the source file as it is now, without using include.lua's
code: lines 13 to 29 of the file, less any region marker lines and the
indentation they all share, must be exactly the code shown, and they
must be the whole region (only blank lines may lie between them and the
region's markers).  So a caption that counts from 0, leaves out a line,
or names lines of a file edited since the page was built is caught.
It prints one line per bad caption and exits with status 1.
--]]

local page = PANDOC_STATE.input_files[1] or "(stdin)"
local errors = 0

local function bad(caption, msg)
  io.stderr:write("check_listings.lua: " .. page .. ": '" .. caption ..
                  "': " .. msg .. "\n")
  errors = errors + 1
end

local function read_lines(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local lines = {}
  for line in f:lines() do lines[#lines + 1] = line:gsub("\r$", "") end
  f:close()
  return lines
end

-- The kind (">" or "<") and name of a region marker line, else nil.
local function marker(line)
  local kind, name = line:match("^%s*//([<>])%s*(%S*)")
  return kind, name
end

local function blank(line) return not line:match("%S") end

-- Split a code block's text into its lines.
local function split(text)
  local out = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do out[#out + 1] = line end
  return out
end

-- Are `shown` (the code on the page) and file lines lo..hi the same
-- code?  Marker lines are not shown; every other line must be the file's
-- line with one and the same indentation removed.  Returns nil if so,
-- else what differs.
local function compare(shown, lines, lo, hi)
  local want = {}
  for i = lo, hi do
    if not marker(lines[i]) then want[#want + 1] = i end
  end
  if #want ~= #shown then
    return "the page shows " .. #shown .. " lines, the file has " ..
           #want .. " there"
  end
  local indent = nil
  for k, i in ipairs(want) do
    local f, s = lines[i], shown[k]
    if blank(f) or blank(s) then
      if not (blank(f) and blank(s)) then
        return "line " .. i .. " of the file differs from the page"
      end
    else
      if indent == nil then indent = f:sub(1, #f - #s) end
      if not indent:match("^%s*$") or f ~= indent .. s then
        return "line " .. i .. " of the file differs from the page"
      end
    end
  end
  return nil
end

-- Nothing but blank lines and markers may lie strictly between line a
-- and line b; returns the first line number that breaks this, or nil.
local function only_gap(lines, a, b)
  for i = a + 1, b - 1 do
    if not blank(lines[i]) and not marker(lines[i]) then return i end
  end
  return nil
end

local function check(srcref, code)
  local link, region = nil, nil
  pandoc.walk_block(srcref, {
    Link = function(l) link = link or l end,
    Span = function(s)
      if s.classes:includes("region") then
        region = pandoc.utils.stringify(s)
      end
    end,
  })
  if not link then return bad(pandoc.utils.stringify(srcref), "no link") end
  local caption = pandoc.utils.stringify(link.content)
  local path, range = caption:match("^(%S+), (lines? [%d\u{2013}-]+)$")
  if not path then
    return bad(caption, "a caption reads 'PATH, lines A\u{2013}B'")
  end
  local lo, hi = range:match("^lines (%d+)\u{2013}(%d+)$")
  if not lo then
    lo = range:match("^line (%d+)$")
    hi = lo
  end
  if not lo then return bad(caption, "cannot read the line range") end
  lo, hi = tonumber(lo), tonumber(hi)
  local target = link.target:gsub("#.*$", "")
  if target:sub(-#path - 1) ~= "/" .. path then
    bad(caption, "links to " .. link.target .. ", not to the file")
  end

  local lines = read_lines(path)
  if not lines then return bad(caption, "no such file") end
  if lo < 1 or hi < lo or hi > #lines then
    return bad(caption, "not a range of lines of the file (it has " ..
               #lines .. ")")
  end
  if blank(lines[lo]) or blank(lines[hi]) then
    return bad(caption, "the range starts or ends on a blank line")
  end
  local diff = compare(split(code.text), lines, lo, hi)
  if diff then return bad(caption, diff) end

  -- The range must be all of the region (or of the file).
  local open, close = 0, #lines + 1
  if region then
    open, close = nil, nil
    for i, line in ipairs(lines) do
      local kind, name = marker(line)
      if name == region and kind == ">" then open = i end
      if name == region and kind == "<" then close = i end
    end
    if not open or not close then
      return bad(caption, "the file has no region '" .. region .. "'")
    end
    if not (open < lo and hi < close) then
      return bad(caption, "region '" .. region .. "' is lines " ..
                 open + 1 .. "\u{2013}" .. close - 1 .. " of the file")
    end
  end
  local left = only_gap(lines, open, lo) or only_gap(lines, hi, close)
  if left then
    bad(caption, "line " .. left .. " of the file belongs to " ..
        (region and ("region '" .. region .. "'") or "the file") ..
        " but is outside the range")
  end
end

local listings = 0

function Div(div)
  if not div.classes:includes("listing") then return nil end
  local srcref, code = nil, nil
  pandoc.walk_block(div, {
    Div = function(d)
      if d.classes:includes("srcref") then srcref = srcref or d end
    end,
    CodeBlock = function(c) code = code or c end,
  })
  listings = listings + 1
  if not srcref or not code then
    bad("listing " .. listings, "no caption or no code")
  else
    check(srcref, code)
  end
  return nil
end

function Pandoc(doc)
  if errors > 0 then
    io.stderr:write("check_listings.lua: " .. page .. ": " .. errors ..
                    " of " .. listings .. " code captions do not match " ..
                    "their files\n")
    os.exit(1)
  end
  return doc
end
