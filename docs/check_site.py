#!/usr/bin/env python3
"""docs/check_site.py -- open every page of the rendered site in headless
Chromium and fail on anything a reader would see broken.

Usage (from the repository root; `make docs-check` runs it):

    python3 docs/check_site.py [--shots DIR] [SITE]     (SITE: docs/site)

Each page (every *.html under SITE) is loaded twice, at a desktop width
(1280 px) and at a phone width (390 px), and book.html a third time as
`make pdf` prints it (print media, an A4 page's width), and fails on:

  - a link inside the site to a file that does not exist, to a folder
    without index.html, out of the site (but for links to the files of
    the repository that holds SITE as docs/site, which must exist: the
    code blocks' captions), or to an #anchor that the
    target page does not have;
  - an <img> that did not load (naturalWidth 0), a <figure> without one;
  - a code block with nothing in it (an included region that is empty);
  - math that did not render: a <math> element that is empty, holds an
    <merror>, or is drawn with zero width or height, and TeX left as
    text (pandoc's <span class="math"> without rendered math in it, as
    pandoc writes when it cannot convert a formula, or as MathJax or
    KaTeX leave it when they did not run);
  - any console error, uncaught exception or failed request; a request
    to the network counts as failed: the site must work offline;
  - a table with a column whose text wraps while the others leave width
    empty beside their text (desktop and print), and on the index page a
    table wider than the phone's screen;
  - a flag in inline code broken across lines after its dashes ("--" at
    the end of one line, "checkpoint" at the start of the next);
  - a figure whose smallest label is drawn under 3/4 of the size of the
    text beside it (desktop and print: gnuplot's SVG files, scaled as the
    page draws them).

With --shots DIR it saves a screenshot of each page at each width,
DIR/PAGE-desktop.png and DIR/PAGE-phone.png (and book-print.png), of the
page's first three screens, and one of each figure of a chapter as it is
drawn in the page (desktop width), DIR/PAGE-figureN.png. Each problem is
one line on stderr naming the page; the exit status is 0 when there are
none, 1 when there are, 2 for a usage error.

Only the standard library: we talk to Chromium through its DevTools
protocol over a pipe (--remote-debugging-pipe: JSON messages ended by a
NUL byte, Chromium reading on its fd 3 and writing on its fd 4), which
needs neither a network port nor a websocket client.

Environment: CHROMIUM, the browser to run (default: chromium).
"""

import argparse
import base64
import fcntl
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

PROG = "docs-check"

# (name, width, height, mobile): the two widths every page is checked at.
# Each view is three screens tall (800 and 844 px) so that a screenshot
# of the view shows the first three screens of the page: a capture
# beyond the view would lay a long page (book.html) out again, and took
# most of the check's time.
VIEWS = [("desktop", 1280, 3 * 800, False), ("phone", 390, 3 * 844, True)]
# book.html once more as make pdf prints it: print media, the width of an
# A4 page inside its margins (178 mm at 96 px an inch), screenshot
# book-print.png.
PRINT_VIEW = ("print", 673, 3 * 950, False)
LOAD_TIMEOUT = 30.0         # s for one page to fire its load event
CALL_TIMEOUT = 30.0         # s for Chromium to answer one command

# Runs in the page once it has loaded; returns a JSON string with what
# the page shows broken, its links and the anchors it has.
PAGE_SCRIPT = r"""
(async () => {
  await document.fonts.ready;
  // Images that wait until they are scrolled to (loading="lazy") are
  // loaded now, so that each is checked; 5 s at most.
  const lazy = [...document.images].filter(i => !i.complete);
  for (const i of lazy) i.loading = "eager";
  await Promise.race([
    Promise.all(lazy.map(i => new Promise(r => {
      i.addEventListener("load", r);
      i.addEventListener("error", r);
      if (i.complete) r();
    }))),
    new Promise(r => setTimeout(r, 5000))]);
  // two frames, so that layout (and so every size below) is final
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const problems = [];
  const short = (s, n) => {
    s = (s || "").replace(/\s+/g, " ").trim();
    return s.length > n ? s.slice(0, n - 3) + "..." : s;
  };
  // the heading a problem sits under, so a reader can find it
  const under = el => {
    const hs = document.querySelectorAll("h1, h2, h3, h4, h5, h6");
    let last = null;
    for (const h of hs) {
      if (h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING)
        last = h;
      else break;
    }
    return last ? ` under "${short(last.textContent, 60)}"` : "";
  };
  for (const img of document.images) {
    if (!img.complete || img.naturalWidth === 0)
      problems.push(`image ${img.getAttribute("src")} did not load` +
                    under(img));
  }
  for (const fig of document.querySelectorAll("figure")) {
    if (!fig.querySelector("img, svg, object, embed, picture, canvas, video"))
      problems.push(`a figure has no image (caption "` +
                    short(fig.textContent, 60) + `")` + under(fig));
  }
  for (const pre of document.querySelectorAll("pre")) {
    if (pre.textContent.trim() !== "") continue;
    const listing = pre.closest(".listing");
    const label = listing && listing.querySelector(".srcref");
    problems.push("empty code block" +
                  (label ? ` (${short(label.textContent, 80)})` : "") +
                  under(pre));
  }
  for (const m of document.querySelectorAll("math")) {
    const tex = m.querySelector("annotation");
    const what = tex ? ` ${short(tex.textContent, 60)}` : "";
    const shown = m.cloneNode(true);
    for (const a of shown.querySelectorAll("annotation, annotation-xml"))
      a.remove();
    if (shown.textContent.trim() === "") {
      problems.push(`empty math element${what}` + under(m));
    } else if (m.querySelector("merror")) {
      problems.push(`math error: ${short(m.querySelector("merror").textContent,
                    60)}${what}` + under(m));
    } else if (m.checkVisibility()) {
      // hidden ones (a closed <details>, a display: none) have no size
      const r = m.getBoundingClientRect();
      if (r.width === 0 || r.height === 0)
        problems.push(`math not rendered (drawn ${r.width} x ${r.height} ` +
                      `px)${what}` + under(m));
    }
  }
  const rendered = "math, mjx-container, .MathJax, .katex";
  for (const s of document.querySelectorAll("span.math")) {
    if (!s.querySelector(rendered))
      problems.push(`math not rendered, shown as TeX: ` +
                    short(s.textContent, 60) + under(s));
  }
  for (const e of document.querySelectorAll(
         "mjx-merror, .katex-error, .MathJax_Error"))
    problems.push(`math error: ${short(e.textContent, 60)}` + under(e));
  // Tables. A column whose text wraps while another keeps empty width
  // beside its text (pandoc's equal "---" widths did that: a column of
  // "./ch1" a quarter of the table, the long text beside it twenty lines
  // tall). And on a phone, a table whose columns run off the screen.
  const phone = screen.width < 600;
  const tables = [...document.querySelectorAll("main table")]
                   .filter(t => t.checkVisibility());
  for (const [k, t] of tables.entries()) {
    const first = t.rows[0] ? [...t.rows[0].cells].map(c => c.textContent)
                               .join(" ") : t.textContent;
    const name = `table ${k + 1} (` + short(first, 40) + ")";
    if (phone) {
      // (a table of display: block scrolls inside its box: its scroll
      // width; one of display: table overflows its parent: its own)
      const wide = Math.round(Math.max(t.scrollWidth,
                                       t.getBoundingClientRect().width));
      const room = t.parentElement.clientWidth;
      if (wide > room + 1 && t.closest(".page-index"))
        problems.push(`${name} is ${wide} px wide where ${room} px fit ` +
                      `on a ${screen.width} px screen: its last ` +
                      `columns are cut off` + under(t));
      continue;
    }
    const cols = [];     // per column: [text width, widest text]
    for (const row of t.rows) {
      if (row.cells.length !== (t.rows[0] || row).cells.length) continue;
      for (const [j, c] of [...row.cells].entries()) {
        const cs = getComputedStyle(c);
        const inner = c.clientWidth - parseFloat(cs.paddingLeft) -
                      parseFloat(cs.paddingRight);
        const probe = document.createElement("div");
        probe.style.cssText = "position: absolute; visibility: hidden; " +
                              "width: max-content; left: 0; top: 0";
        probe.innerHTML = c.innerHTML;
        c.appendChild(probe);
        const need = probe.getBoundingClientRect().width;
        probe.remove();
        cols[j] = cols[j] || [inner, 0];
        cols[j][1] = Math.max(cols[j][1], need);
      }
    }
    const wraps = cols.findIndex(([w, need]) => need > w + 1);
    const spare = cols.reduce((sum, [w, need]) =>
                              sum + (need <= w + 1 ? w - need : 0), 0);
    if (wraps >= 0 && spare > 40)
      problems.push(`${name}: column ${wraps + 1} wraps its text while ` +
                    `the others leave ${Math.round(spare)} px empty` +
                    under(t));
  }
  // The figures as drawn here, and the size of the text beside them
  // (the check of their labels' size needs their files: see below).
  const p0 = document.querySelector("main p") || document.body;
  const figures = [...document.querySelectorAll("figure img")]
    .filter(i => i.checkVisibility())
    .map(i => ({src: i.getAttribute("src"),
                width: i.getBoundingClientRect().width}));
  const text_px = parseFloat(getComputedStyle(p0).fontSize);
  // A flag in inline code broken after its dashes: "--" at the end of a
  // line, "checkpoint" at the start of the next (the PDF did that).
  for (const c of document.querySelectorAll("main code")) {
    if (c.closest("pre")) continue;
    const walk = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
    for (let n; (n = walk.nextNode());) {
      const re = /(^|\s)(-+)(?=[A-Za-z0-9])/g;
      for (let m; (m = re.exec(n.data));) {
        const r = document.createRange();
        const at = m.index + m[1].length;
        r.setStart(n, at);
        r.setEnd(n, at + m[2].length + 1);
        const boxes = [...r.getClientRects()].filter(b => b.width > 0);
        if (boxes.length > 1 &&
            boxes[boxes.length - 1].top - boxes[0].top > 2)
          problems.push(`inline code "${short(c.textContent, 40)}" is ` +
                        `broken after its dashes` + under(c));
      }
    }
  }
  const links = [];
  for (const a of document.querySelectorAll("a[href], area[href]"))
    links.push({href: a.getAttribute("href"), url: a.href,
                text: short(a.textContent, 40)});
  const ids = [];
  for (const e of document.querySelectorAll("[id]")) ids.push(e.id);
  for (const a of document.querySelectorAll("a[name]")) ids.push(a.name);
  return JSON.stringify({problems, links, ids, figures, text_px});
})()
"""


class CheckError(Exception):
    """Chromium did not do what we asked: the check cannot go on."""


class Browser:
    """One headless Chromium, driven over --remote-debugging-pipe."""

    def __init__(self, exe, workdir):
        self.next_id = 0
        self.events = []            # (sessionId, method, params) not yet seen
        self.buf = b""
        self.log_path = os.path.join(workdir, "chromium.log")
        to_r, to_w = os.pipe()      # we write, Chromium reads (its fd 3)
        from_r, from_w = os.pipe()  # Chromium writes, we read (its fd 4)
        # Out of the way of 3 and 4, so that the dup2s below cannot
        # overwrite one end with the other.
        child = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
                 for fd in (to_r, from_w)]
        os.close(to_r)
        os.close(from_w)

        def fds_3_and_4():
            os.dup2(child[0], 3)
            os.dup2(child[1], 4)

        args = [exe, "--headless", "--remote-debugging-pipe",
                "--user-data-dir=" + os.path.join(workdir, "profile"),
                # root (as in CI) cannot use the sandbox; the pages
                # are our own files
                "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-sync",
                "--disable-background-networking",
                "--disable-component-update", "--disable-default-apps",
                "--disable-features=Translate,MediaRouter,OptimizationHints",
                "--hide-scrollbars", "--mute-audio", "about:blank"]
        self.log = open(self.log_path, "wb")
        try:
            # close_fds=False: only 3 and 4 are inheritable (Python
            # makes every other descriptor close on exec).
            self.proc = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=self.log,
                stderr=self.log, preexec_fn=fds_3_and_4, close_fds=False,
                start_new_session=True)
        except OSError as e:
            raise CheckError(f"cannot run {exe}: {e.strerror}") from e
        finally:
            for fd in child:
                os.close(fd)
        self.wfd, self.rfd = to_w, from_r

    def _read_message(self, deadline, late="Chromium did not answer in time"):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CheckError(late)
            ready, _, _ = select.select([self.rfd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.rfd, 1 << 20)
            if not chunk:
                raise CheckError("Chromium exited (its log: " +
                                 self.log_tail() + ")")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def log_tail(self):
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return "none"
        # the launcher and D-Bus complain on every start; not our problem
        lines = [ln for ln in lines if "dbus" not in ln and ln.strip()]
        return " | ".join(lines[-3:]) or "empty"

    def call(self, method, params=None, session=None):
        """Send one command and wait for its answer, keeping the events
        that arrive meanwhile."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self.wfd, data):]
        deadline = time.monotonic() + CALL_TIMEOUT
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise CheckError(f"{method}: " +
                                     reply["error"].get("message", "?"))
                return reply.get("result", {})
            if "method" in reply:
                self.events.append((reply.get("sessionId"), reply["method"],
                                    reply.get("params", {})))

    def wait_event(self, session, method, timeout, late):
        """Wait for an event of a page; CheckError(late) after timeout s."""
        deadline = time.monotonic() + timeout
        while True:
            for i, (s, m, _) in enumerate(self.events):
                if s == session and m == method:
                    return self.events.pop(i)[2]
                if s == session and m == "Inspector.targetCrashed":
                    raise CheckError("the page crashed Chromium's renderer")
            msg = self._read_message(deadline, late)
            if "method" in msg:
                self.events.append((msg.get("sessionId"), msg["method"],
                                    msg.get("params", {})))

    def take_events(self, session):
        mine = [(m, p) for s, m, p in self.events if s == session]
        self.events = [e for e in self.events if e[0] != session]
        return mine

    def close(self):
        try:
            self.call("Browser.close")
        except CheckError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            # its own process group (start_new_session): the renderers
            # it started go with it
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for fd in (self.wfd, self.rfd):
            os.close(fd)
        self.log.close()


# A figure's place in the page, brought into view first: [x, y, w, h]
FIGURE_BOX = """(() => {
  const f = document.querySelectorAll("figure")[%d];
  f.scrollIntoView({block: "center"});   // (clear of the sticky bar)
  const b = f.getBoundingClientRect();
  return JSON.stringify([b.left + scrollX, b.top + scrollY, b.width,
                         b.height]);
})()"""


def shoot_figures(browser, sid, shot_path):
    """A screenshot of each figure of the page as the reader sees it,
    caption included, beside the page's: PAGE-figureN.png. The page's
    own screenshots show its first screens only, and figures sit
    further down."""
    n = browser.call("Runtime.evaluate",
                     {"expression": 'document.querySelectorAll("figure")'
                      ".length", "returnByValue": True},
                     session=sid)["result"]["value"]
    for i in range(n):
        box = browser.call("Runtime.evaluate",
                           {"expression": FIGURE_BOX % i,
                            "returnByValue": True}, session=sid)
        x, y, w, h = json.loads(box["result"]["value"])
        if w <= 0 or h <= 0:
            continue            # (a hidden figure: reported elsewhere)
        shot = browser.call("Page.captureScreenshot",
                            {"format": "png", "clip": {
                                "x": x, "y": y, "width": w, "height": h,
                                "scale": 1}}, session=sid)
        path = shot_path.replace("-desktop.png", f"-figure{i + 1}.png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))


def load_page(browser, url, view, shot_path):
    """Load url at one width. Returns (problems, links, ids)."""
    name, width, height, mobile = view
    target = browser.call("Target.createTarget", {"url": "about:blank"})
    tid = target["targetId"]
    sid = browser.call("Target.attachToTarget",
                       {"targetId": tid, "flatten": True})["sessionId"]
    problems = []
    try:
        for domain in ("Inspector", "Page", "Runtime", "Log", "Network"):
            browser.call(domain + ".enable", session=sid)
        # The site must work offline: anything it asks of the network is
        # refused here (and so reported below), online or not.
        browser.call("Network.setBlockedURLs",
                     {"urls": ["http://*", "https://*", "ws://*", "wss://*"]},
                     session=sid)
        browser.call("Emulation.setDeviceMetricsOverride",
                     {"width": width, "height": height,
                      "deviceScaleFactor": 1, "mobile": mobile},
                     session=sid)
        browser.call("Emulation.setEmulatedMedia",
                     {"media": "print" if name == "print" else ""},
                     session=sid)
        nav = browser.call("Page.navigate", {"url": url}, session=sid)
        if nav.get("errorText"):
            return [f"cannot be opened ({nav['errorText']})"], [], []
        browser.wait_event(sid, "Page.loadEventFired", LOAD_TIMEOUT,
                           f"did not finish loading in {LOAD_TIMEOUT:.0f} s")
        res = browser.call("Runtime.evaluate",
                           {"expression": PAGE_SCRIPT, "awaitPromise": True,
                            "returnByValue": True}, session=sid)
        if "exceptionDetails" in res:
            raise CheckError("the page check script failed: " +
                             res["exceptionDetails"].get("text", "?"))
        found = json.loads(res["result"]["value"])
        problems += found["problems"]
        if not mobile:
            problems += figure_problems(urllib.parse.urlsplit(url).path,
                                        found["figures"], found["text_px"])
        if shot_path:
            shot = browser.call("Page.captureScreenshot", {"format": "png"},
                                session=sid)
            with open(shot_path, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
            if name == "desktop" and not url.endswith("/book.html"):
                shoot_figures(browser, sid, shot_path)
        # One more round trip: every event of the load is read by now.
        browser.call("Runtime.evaluate", {"expression": "0"}, session=sid)
        problems += event_problems(browser.take_events(sid))
        return problems, found["links"], found["ids"]
    finally:
        browser.call("Target.closeTarget", {"targetId": tid})
        browser.take_events(sid)


# A figure's labels, as drawn in the page at the desktop width, are at
# least this much of the size of the text beside them. (On a phone every
# figure is shrunk to the screen; that is no fault of the figure.)
LABEL_MIN = 0.75


def figure_problems(page_path, figures, text_px):
    """Figures whose smallest label is drawn too small: their SVG files
    (gnuplot's: a width and font-size attributes) scaled as the page
    draws them."""
    out = []
    for fig in figures:
        src = urllib.parse.unquote(fig["src"].split("#")[0])
        path = os.path.join(os.path.dirname(urllib.parse.unquote(page_path)),
                            src)
        if not src.endswith(".svg") or not os.path.isfile(path):
            continue            # (a missing image is reported elsewhere)
        with open(path, encoding="utf-8") as f:
            svg = f.read()
        width = re.search(r'<svg[^>]*?\swidth="([0-9.]+)', svg)
        sizes = [float(x) for x in re.findall(r'font-size="([0-9.]+)"', svg)]
        if not width or not sizes or fig["width"] <= 0:
            continue
        px = min(sizes) * fig["width"] / float(width.group(1))
        if px < LABEL_MIN * text_px:
            out.append(f"figure {src}: labels drawn {px:.1f} px high beside "
                       f"{text_px:.0f} px text (at least "
                       f"{LABEL_MIN * text_px:.1f} px)")
    return out


def event_problems(events):
    """Console errors, exceptions and failed requests among a page's
    DevTools events."""
    out = []
    urls = {}
    for method, p in events:
        if method == "Network.requestWillBeSent":
            urls[p["requestId"]] = p["request"]["url"]
        elif method == "Network.loadingFailed":
            url = urls.get(p["requestId"], "?")
            why = p.get("errorText", "")
            if p.get("blockedReason"):
                why = "a request to the network; the site must work offline"
            out.append(f"request failed: {short_url(url)} ({why})")
        elif method == "Network.responseReceived":
            status = p["response"].get("status", 0)
            if status >= 400:
                out.append(f"request failed: {short_url(p['response']['url'])}"
                           f" (HTTP {status})")
        elif method == "Runtime.consoleAPICalled":
            if p["type"] in ("error", "assert"):
                text = " ".join(str(a.get("value", a.get("description", "")))
                                for a in p.get("args", []))
                out.append(f"console error: {text}")
        elif method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            text = d.get("exception", {}).get("description") or d.get("text")
            out.append("uncaught exception: " + text.splitlines()[0])
        elif method == "Log.entryAdded":
            e = p["entry"]
            # source "network" repeats Network.loadingFailed above
            if e["level"] == "error" and e.get("source") != "network":
                out.append(f"browser error: {e['text']}")
    return out


def short_url(url):
    if url.startswith("file://"):
        return urllib.parse.unquote(urllib.parse.urlsplit(url).path)
    return url


def link_problems(site, page, links, ids_of):
    """Broken links of one page: targets inside the site that are not
    there, or anchors the target page does not have."""
    out = []
    seen = set()
    real = os.path.realpath(site)
    repo = None   # the repository around a site in its docs/site
    if real.endswith(os.sep + os.path.join("docs", "site")):
        repo = os.path.dirname(os.path.dirname(real))
    for link in links:
        parts = urllib.parse.urlsplit(link["url"])
        if parts.scheme != "file" or link["href"] in seen:
            continue            # the web (not checked offline), mailto:
        seen.add(link["href"])
        path = os.path.realpath(urllib.parse.unquote(parts.path))
        frag = urllib.parse.unquote(parts.fragment)
        what = f'broken link "{link["text"]}" -> {link["href"]}: '
        rel = os.path.relpath(path, site)
        up = rel == ".." or rel.startswith(".." + os.sep)
        in_repo = repo and os.path.relpath(path, repo)
        if up and in_repo and not in_repo.startswith(".."):
            # a code block's caption links to its source file in the
            # repository the site was built from (docs/site/../../)
            if not os.path.isfile(path):
                out.append(what + f"no file {in_repo} in the repository")
        elif up:
            out.append(what + "points out of the site")
        elif os.path.isdir(path):
            if not os.path.isfile(os.path.join(path, "index.html")):
                out.append(what + f"{rel}/ is a folder without index.html")
        elif not os.path.isfile(path):
            out.append(what + f"no file {rel}")
        elif frag and rel in ids_of and frag not in ids_of[rel]:
            out.append(what + f"{rel} has no anchor #{frag}")
    return out


class Args(argparse.ArgumentParser):
    """argparse, with a usage error in one line (exit status 2)."""

    def error(self, message):
        print(f"{PROG}: error: {message} (see --help)", file=sys.stderr)
        sys.exit(2)


def main():
    ap = Args(
        prog=PROG, description="Check the rendered site in headless "
        "Chromium: links, images, code blocks, math, console errors.")
    ap.add_argument("site", nargs="?", default="docs/site",
                    help="the site's folder (default: docs/site)")
    ap.add_argument("--shots", metavar="DIR",
                    help="save screenshots of every page here")
    args = ap.parse_args()

    site = os.path.realpath(args.site)
    if not os.path.isdir(site):
        print(f"{PROG}: error: no site folder {args.site} (run make docs)",
              file=sys.stderr)
        return 2
    pages = sorted(os.path.relpath(os.path.join(d, f), site)
                   for d, _, files in os.walk(site)
                   for f in files if f.endswith(".html"))
    if not pages:
        print(f"{PROG}: error: no .html pages in {args.site}",
              file=sys.stderr)
        return 2
    exe = os.environ.get("CHROMIUM", "chromium")
    if not shutil.which(exe):
        print(f"{PROG}: error: {exe} not found (apt-get install chromium, "
              "or make docs-check, which installs it)", file=sys.stderr)
        return 2
    if args.shots:
        os.makedirs(args.shots, exist_ok=True)

    start = time.monotonic()
    problems = []               # (page, text)
    ids_of, links_of = {}, {}
    with tempfile.TemporaryDirectory(prefix="docs-check.") as tmp:
        browser = Browser(exe, tmp)
        page = pages[0]
        try:
            for page in pages:
                url = "file://" + urllib.parse.quote(os.path.join(site, page))
                views = VIEWS + ([PRINT_VIEW] if page == "book.html" else [])
                for view in views:
                    shot = None
                    if args.shots:
                        name = page[:-len(".html")].replace(os.sep, "_")
                        shot = os.path.join(args.shots,
                                            f"{name}-{view[0]}.png")
                    found, links, ids = load_page(browser, url, view, shot)
                    for text in found:
                        # the same problem at both widths is said once
                        if (page, text) not in problems:
                            problems.append((page, text))
                    if view is VIEWS[0]:
                        ids_of[page], links_of[page] = set(ids), links
        except CheckError as e:
            print(f"{PROG}: error: {page}: {e}", file=sys.stderr)
            return 1
        finally:
            browser.close()
    for page in pages:
        for text in link_problems(site, page, links_of[page], ids_of):
            problems.append((page, text))

    # page by page, in the order the pages were checked
    problems.sort(key=lambda p: pages.index(p[0]))
    for page, text in problems:
        print(f"{PROG}: {page}: {text}", file=sys.stderr)
    took = time.monotonic() - start
    shots = f"; screenshots in {args.shots}" if args.shots else ""
    if problems:
        print(f"{PROG}: FAILED: {len(problems)} problem(s) in "
              f"{len({p for p, _ in problems})} of {len(pages)} page(s) "
              f"({took:.1f} s{shots})", file=sys.stderr)
        return 1
    print(f"{PROG}: {len(pages)} page(s) OK at {len(VIEWS)} widths "
          f"({took:.1f} s{shots})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
