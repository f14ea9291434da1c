--[[
include.lua -- a small pandoc Lua filter used by docs/build.sh.

It does two jobs:

1. Code inclusion.  A chapter shows a region of a source file as a
   fenced code block with an include= attribute, the region's code
   written inside it, and above it a link to the region's lines:

       [`chapters/ch1_data/vocab.c`, lines 40–72](vocab.c#L40-L72) · region `encode`

       ```{.c include="chapters/ch1_data/vocab.c" region="encode"}
       ...the lines between the marker comments, dedented...
       ```

   where the source marks the region with

       //> encode
       ...these lines are included...
       //< encode

   docs/code_listings.sh --write (make listings) writes the code and the
   link, so that the Markdown read without the site (in an editor, on
   a code host) shows the code too.  This filter takes the region from
   the file again and stops the build unless the block's code is
   exactly it and the link names its lines and file: a listing whose
   source changed since make listings fails here, with what differs.

   The path is relative to the repository root (build.sh runs pandoc
   from there).  Without region=... the whole file is included.
   Marker lines of any region are never shown, so regions may be nested
   or may overlap.  The included lines are dedented.  In the site the
   link is replaced by a caption above the code that names the source
   file, the range of lines shown ("chapters/ch1_data/vocab.c, lines
   40–72", a link to the file) and the region.

   Anything odd -- missing file, unknown region, a region opened twice
   or never closed -- stops the build with a message, so the book can
   never silently show stale or wrong code.

2. Link rewriting.  The markdown sources link to each other the way
   GitHub shows them (README.md, chapters/ch1_data/ch1.md, ...).  In the
   rendered site those pages are index.html, ch1.html, ...; figures
   under docs/figures/ (or docs/site/figures/) end up in figures/.  A
   chapter links a figure as ../../docs/site/figures/NAME.svg (where
   make figures draws it); an image whose file is not in
   docs/site/figures/ stops the build.
--]]

-- Stop the whole build with a readable message.  pandoc exits with the
-- status we give, so build.sh notices the failure.
local function fail(msg)
  io.stderr:write("include.lua: error: " .. msg .. "\n")
  os.exit(1)
end

-- Read a file and return its lines (without line endings).
local function read_lines(path)
  local f = io.open(path, "r")
  if not f then
    fail("cannot open included file '" .. path ..
         "' (paths are relative to the repository root)")
  end
  local lines = {}
  for line in f:lines() do
    lines[#lines + 1] = line:gsub("\r$", "")  -- tolerate CRLF files
  end
  f:close()
  return lines
end

-- If `line` is a region marker, return its kind (">" opens, "<" closes)
-- and the region name; otherwise return nil.  A marker is a line whose
-- content, after leading whitespace, starts with "//>" or "//<"; the
-- name is the first word after that.
local function parse_marker(line)
  local kind, rest = line:match("^%s*//([<>])(.*)$")
  if not kind then return nil end
  local name = rest:match("^%s*(%S+)")
  return kind, name
end

-- Find every region of a file.  Returns a table
--   regions[name] = { first = <line no. of opening marker>,
--                     last  = <line no. of closing marker> }
-- and checks that each region is opened once and closed once.
local function scan_regions(path, lines)
  local regions = {}
  for i, line in ipairs(lines) do
    local kind, name = parse_marker(line)
    if kind and not name then
      fail(path .. ":" .. i .. ": region marker without a name")
    elseif kind == ">" then
      if regions[name] then
        fail(path .. ":" .. i .. ": region '" .. name ..
             "' appears twice (first opened on line " ..
             regions[name].first .. ")")
      end
      regions[name] = { first = i }
    elseif kind == "<" then
      local r = regions[name]
      if not r then
        fail(path .. ":" .. i .. ": region '" .. name ..
             "' is closed but was never opened")
      elseif r.last then
        fail(path .. ":" .. i .. ": region '" .. name ..
             "' is closed twice")
      end
      r.last = i
    end
  end
  for name, r in pairs(regions) do
    if not r.last then
      fail(path .. ":" .. r.first .. ": region '" .. name ..
           "' is opened but never closed")
    end
  end
  return regions
end

-- Remove the indentation that all non-blank lines share, so a region
-- taken from inside a function body starts at column 0.
local function dedent(lines)
  local common = nil
  for _, line in ipairs(lines) do
    if line:match("%S") then
      local indent = line:match("^%s*")
      if common == nil then
        common = indent
      else
        -- shorten `common` until it is a prefix of this line's indent
        while indent:sub(1, #common) ~= common do
          common = common:sub(1, -2)
        end
      end
    end
  end
  local n = #(common or "")
  local out = {}
  for i, line in ipairs(lines) do
    if line:match("%S") then
      out[i] = line:sub(n + 1)
    else
      out[i] = ""  -- blank lines become truly empty
    end
  end
  return out
end

-- Return the text to show for file `path`, region `region` (nil means
-- the whole file), and the numbers of the first and last lines shown
-- (1-based, as an editor counts them) for the caption.
local function extract(path, region)
  local lines = read_lines(path)
  local regions = scan_regions(path, lines)

  local first, last = 1, #lines
  if region then
    local r = regions[region]
    if not r then
      fail("region '" .. region .. "' not found in " .. path ..
           " (expected lines '//> " .. region .. "' and '//< " ..
           region .. "')")
    end
    -- strictly between the two marker lines
    first, last = r.first + 1, r.last - 1
  end

  -- kept[k] is a shown line, at[k] its line number in the file.
  local kept, at = {}, {}
  for i = first, last do
    if not parse_marker(lines[i]) then  -- drop markers of other regions
      kept[#kept + 1] = lines[i]
      at[#at + 1] = i
    end
  end

  -- Drop blank lines at the very start and end of the snippet (so the
  -- caption's range starts and ends on a line the reader sees).
  while #kept > 0 and not kept[1]:match("%S") do
    table.remove(kept, 1)
    table.remove(at, 1)
  end
  while #kept > 0 and not kept[#kept]:match("%S") do
    table.remove(kept)
    table.remove(at)
  end
  if #kept == 0 then
    fail(path .. ": " .. (region and ("region '" .. region .. "'")
                          or "the file") .. " has no lines to show")
  end

  return table.concat(dedent(kept), "\n"), at[1], at[#at]
end

-- Where a caption's link points: the source file's path is appended to
-- this.  The default, ../../, is the repository seen from docs/site/, so
-- the links open the files of the checkout the site was built from.
-- build.sh passes DOCS_SRC_BASE (e.g. a GitHub ".../blob/main/" URL;
-- then "#L40-L72" is added, which GitHub shows as the lines).
local SRC_BASE = os.getenv("DOCS_SRC_BASE") or ""
if SRC_BASE == "" then SRC_BASE = "../../" end
if not SRC_BASE:match("/$") then SRC_BASE = SRC_BASE .. "/" end

-- The text being rendered ("chapters/ch1_data/ch1.md") and its folder,
-- when pandoc renders one; the book renders them all at once.
local TEXT = #PANDOC_STATE.input_files == 1 and PANDOC_STATE.input_files[1]
             or nil
local TEXT_DIR = TEXT and (TEXT:match("^(.*/)") or "") or nil

-- The link that docs/code_listings.sh writes above a listing, so that
-- the Markdown read on a code host links to the lines it shows:
--   [`chapters/ch1_data/vocab.c`, lines 40–72](vocab.c#L40-L72) · region `x`
-- Its target is relative to the text's folder.
local function link_target(path, lo, hi)
  local rel = path
  if TEXT_DIR and path:sub(1, #TEXT_DIR) == TEXT_DIR then
    rel = path:sub(#TEXT_DIR + 1)
  elseif TEXT_DIR then
    rel = TEXT_DIR:gsub("[^/]+/", "../") .. path
  end
  return rel .. "#L" .. lo .. (lo == hi and "" or ("-L" .. hi))
end

local function is_link_para(b)
  if b.t ~= "Para" and b.t ~= "Plain" then return false end
  local first = b.content[1]
  return first and first.t == "Link" and first.content[1]
         and first.content[1].t == "Code"
end

-- What is wrong with the code of a listing, or nil: `have` is the
-- block's text in the Markdown, `want` the region's.
local function code_differs(have, want)
  if have == "" then return "it is empty" end
  if have == want then return nil end
  local h, w = {}, {}
  for l in (have .. "\n"):gmatch("([^\n]*)\n") do h[#h + 1] = l end
  for l in (want .. "\n"):gmatch("([^\n]*)\n") do w[#w + 1] = l end
  for k = 1, math.max(#h, #w) do
    if h[k] ~= w[k] then
      return "its line " .. k .. " differs from the region's (" ..
             (h[k] and ("'" .. h[k] .. "'") or "nothing") .. " here, " ..
             (w[k] and ("'" .. w[k] .. "'") or "nothing") .. " there)"
    end
  end
  return "it differs from the region"
end

-- An include code block and the link above it (nil when missing) as
-- one listing: the caption above the code. Both must be what
-- docs/code_listings.sh writes from the source as it is now.
local function listing(block, para)
  local path = block.attributes["include"]
  local region = block.attributes["region"]
  if region == "" then region = nil end
  local text, lo, hi = extract(path, region)
  local range = lo == hi and ("line " .. lo)
                          or ("lines " .. lo .. "\u{2013}" .. hi)
  local what = (TEXT or "a chapter") .. ": the listing of " .. path ..
               (region and (" region '" .. region .. "'") or "")
  local problem = code_differs(block.text, text)
  if not para then
    problem = problem or "no link to its lines above it"
  else
    local want = path .. ", " .. range ..
                 (region and (" \u{00B7} region " .. region) or "")
    local have = pandoc.utils.stringify(para)
    local target = para.content[1].target
    local anchor = "#L" .. lo .. (lo == hi and "" or ("-L" .. hi))
    local good_target
    if TEXT_DIR then
      good_target = target == link_target(path, lo, hi)
    else  -- the book: the file's name and the lines
      local file = target:gsub("#.*$", ""):gsub("^%.%./", ""):gsub("^%.%./", "")
      good_target = target:sub(-#anchor) == anchor and
                    ("/" .. path):sub(-#file - 1) == "/" .. file
    end
    if have ~= want then
      problem = problem or ("its link reads '" .. have .. "', not '" ..
                            want .. "'")
    elseif not good_target then
      problem = problem or ("its link points to " .. target .. ", not " ..
                            link_target(path, lo, hi))
    end
  end
  if problem then
    fail(what .. ": " .. problem .. " (run make listings)")
  end

  block.text = text
  -- The include/region attributes have done their job; classes such as
  -- .c stay, so the code is still highlighted as C.
  block.attributes["include"] = nil
  block.attributes["region"] = nil

  -- The caption, above the code:
  --   <div class="srcref"><a href="SRC_BASE/path"><code>path</code>,
  --   lines 40–72</a> <span class="region">name</span></div>
  -- docs/check_listings.lua reads it back from the finished page and
  -- checks that those lines of the file are the code shown.
  local href = SRC_BASE .. path
  if SRC_BASE:match("^https?://") then
    href = href .. "#L" .. lo .. (lo == hi and "" or ("-L" .. hi))
  end
  local label = {
    pandoc.Link({ pandoc.Code(path), pandoc.Str(","), pandoc.Space(),
                  pandoc.Str(range) }, href),
  }
  if region then
    label[#label + 1] = pandoc.Space()
    label[#label + 1] = pandoc.Span({ pandoc.Str(region) },
                                    pandoc.Attr("", { "region" }))
  end
  local srcref = pandoc.Div({ pandoc.Plain(label) },
                            pandoc.Attr("", { "srcref" }))
  return pandoc.Div({ srcref, block }, pandoc.Attr("", { "listing" }))
end

-- Each include code block, with the link paragraph above it, becomes one
-- listing (the link's place is taken by the site's caption).
function Blocks(blocks)
  local out, changed = {}, false
  for _, b in ipairs(blocks) do
    if b.t == "CodeBlock" and b.attributes["include"] then
      local para = nil
      if #out > 0 and is_link_para(out[#out]) then
        para = table.remove(out)
      end
      out[#out + 1] = listing(b, para)
      changed = true
    else
      out[#out + 1] = b
    end
  end
  if changed then return out end
end

-- Map a link target from the markdown world to the rendered site.
-- Returns nil when the target should stay as it is.
local function site_target(target)
  if target:match("^%a[%w+.-]*:") or target:match("^#") then
    return nil  -- absolute URL (http:, mailto:, ...) or in-page anchor
  end
  local path, anchor = target:match("^([^#]*)(.*)$")

  -- .../chN_something/chN.md  ->  chN.html  (any leading path allowed)
  local dir_n, file_n = path:match("ch(%d+)_[^/]*/ch(%d+)%.md$")
  local before = dir_n and path:match("^(.-)ch%d+_[^/]*/ch%d+%.md$")
  if dir_n and dir_n == file_n and (before == "" or before:match("/$")) then
    return "ch" .. tonumber(dir_n) .. ".html" .. anchor
  end
  -- chN.md on its own (a link between files in the same folder)
  local n = path:match("^ch(%d+)%.md$")
  if n then return "ch" .. tonumber(n) .. ".html" .. anchor end
  -- README.md (at any depth)  ->  index.html
  if path == "README.md" or path:match("/README%.md$") then
    return "index.html" .. anchor
  end
  -- figures are copied to figures/ inside the site
  local fig = path:match("docs/site/figures/(.+)$")
           or path:match("docs/figures/(.+)$")
  if fig then return "figures/" .. fig .. anchor end
  return nil
end

function Link(link)
  local t = site_target(link.target)
  if t then
    link.target = t
    return link
  end
end

-- A figure is drawn at build time (make figures, before build.sh), so
-- its file must be in the site by now: a missing one stops the build
-- rather than leave a broken image in the book.
function Image(img)
  local t = site_target(img.src)
  if not t then return nil end
  local fig = t:match("^figures/([^#]+)")
  if fig then
    local f = io.open("docs/site/figures/" .. fig, "r")
    if not f then
      fail("image " .. img.src .. ": docs/site/figures/" .. fig ..
           " does not exist (run make figures, or make docs, which " ..
           "draws it; its script is docs/figures/*.gp)")
    end
    f:close()
  end
  img.src = t
  return img
end

-- Inline math does not wrap: a long formula in a sentence would make
-- the whole page wider than a phone's screen.  Wrap those in
-- <span class="math-wide">, which style.css lets scroll sideways on a
-- narrow screen.  The length of the TeX is a rough measure of the
-- width; 50 characters come to about a phone's width of symbols.
function Math(m)
  if m.mathtype == "InlineMath" and #m.text >= 50 then
    return pandoc.Span({ m }, pandoc.Attr("", { "math-wide" }))
  end
end

-- Inline code such as `--checkpoint FILE`: a browser may break a line
-- after any hyphen, and the PDF printed "--" at the end of one line and
-- "checkpoint" at the start of the next. Each word of inline code that
-- starts with a hyphen (a flag) goes into <span class="nobr">, which
-- style.css keeps whole; the spaces between the words still break, and
-- so may a long path after a hyphen inside it. (A character that forbids
-- the break, such as U+2011 or U+2060, would be copied with the command
-- and break it in a shell.)
local function html_escape(s)
  return (s:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"))
end

function Code(c)
  if not FORMAT:match("html") or not (" " .. c.text):find("%s%-") then
    return nil
  end
  local parts = {}
  for space, word in c.text:gmatch("(%s*)(%S*)") do
    if space ~= "" then parts[#parts + 1] = html_escape(space) end
    if word ~= "" then
      local w = html_escape(word)
      if word:sub(1, 1) == "-" then
        w = '<span class="nobr">' .. w .. '</span>'
      end
      parts[#parts + 1] = w
    end
  end
  local attrs = ""
  if c.identifier ~= "" then
    attrs = attrs .. ' id="' .. html_escape(c.identifier) .. '"'
  end
  if #c.classes > 0 then
    attrs = attrs .. ' class="' .. html_escape(table.concat(c.classes, " "))
            .. '"'
  end
  return pandoc.RawInline("html", "<code" .. attrs .. ">" ..
                          table.concat(parts) .. "</code>")
end

-- Book page only (a no-op on single pages, where pandoc already makes
-- ids unique): build.sh renders book.html with --file-scope, so two
-- chapters may both have a heading "Exercises" with id "exercises".
-- Give later duplicates a suffix ("exercises-1") so the table of
-- contents works, and fix "#exercises" links inside that chapter.
-- A new chapter starts at each top-level "# heading".
function Pandoc(doc)
  local blocks = doc.blocks
  local used = {}        -- ids handed out so far
  local renames = {}     -- renames[chapter][old id] = new id
  local chapter_of = {}  -- chapter number of each top-level block
  local chapter = 0
  for i, block in ipairs(blocks) do
    if block.t == "Header" and block.level == 1 then chapter = chapter + 1 end
    chapter_of[i] = chapter
    if block.t == "Header" and block.identifier ~= "" then
      local id = block.identifier
      if used[id] then
        local k = 1
        while used[id .. "-" .. k] do k = k + 1 end
        renames[chapter] = renames[chapter] or {}
        renames[chapter][id] = id .. "-" .. k
        id = id .. "-" .. k
        block.identifier = id
      end
      used[id] = true
    end
  end
  if next(renames) == nil then return nil end  -- nothing was renamed

  for i, block in ipairs(blocks) do
    local map = renames[chapter_of[i]]
    if map then
      blocks[i] = pandoc.walk_block(block, {
        Link = function(link)
          local new = map[link.target:match("^#(.+)$") or ""]
          if new then
            link.target = "#" .. new
            return link
          end
        end,
      })
    end
  end
  return pandoc.Pandoc(blocks, doc.meta)
end
