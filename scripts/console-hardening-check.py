#!/usr/bin/env -S python3 -S
"""console-hardening-check BINARY [OUT]: issue 53's checks of the browser console, each starting
its own console (--test-pattern, a free loopback port) and printing its figures:
  - flood: under a descriptor limit of 256, 300 idle connections: the console lives, refuses
    clearly (503) what is over its budget, closes the idle ones and answers again
  - host: a foreign Host (evil.example, 127.evil.com) is refused; loopback names pass
  - origin: a cross-origin text/plain POST of JSON to the controls, and a cross-site stream
    request, are refused before the camera (no library error, no capture started)
  - stalled: 20 viewers that never read: their server-side sockets are closed within a minute
  - slowloris: 22 requests trickled a byte every 2 s (the request line, header lines, a body)
    are closed within 30 s (--idle-timeout 5 --write-timeout 5), and others are served meanwhile
  - spellings: fps=120, 120/1, 0120, 240/2, 120.0, 120.00 share one capture
  - events: 5 pages of one camera's events share one feed (one controlChanges() on a device),
    started once and stopped when the last page goes (/api/status counts the pages)
  - token: the cookie's name carries the port and its value is encoded; the cookie alone does not
    change state; --token-file and MEDIA_CONSOLE_TOKEN keep the token out of ps
  - headers: X-Frame-Options, CSP frame-ancestors, nosniff, Referrer-Policy on every answer
  - encoding: /api/status answers within 1 s while 4 captures stream (2 at 4K), each viewer gets
    frames and none is dropped as stalled (the encoding runs on the captures' threads, not on the
    cooperative pool that serves HTTP)
  - keepalive: a keep-alive connection idle 8 s under --write-timeout 5 answers its second request
    (the write timeout closes only connections whose output the client does not take)
  - load: 200 viewers of one stream for 30 s: each gets frames; RSS and threads come back
Exit status 0 only when every check passed. Run by scripts/console-check."""
import json, os, resource, selectors, socket, subprocess, sys, threading, time
binary = sys.argv[1]
out = sys.argv[2] if len(sys.argv) > 2 else "/tmp"
only = set(os.environ.get("CHECKS", "").split(",")) - {""}
failures = []
HELP = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout

def check(name, ok, figure):
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {figure}", flush=True)
    if not ok: failures.append(name)

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close(); return port

class Console:
    def __init__(self, name, *options, nofile=None, env=None):
        self.port = free_port()
        self.log = os.path.join(out, f"console-{name}.log")
        args = [binary, "--test-pattern", "--port", str(self.port)]
        # Options this build may not know (the checks also run on older builds, for the figures).
        for option in options:
            if isinstance(option, tuple):
                if option[0] in HELP: args += list(option)
            else: args.append(option)
        def limit():
            if nofile: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        self.process = subprocess.Popen(args, stdout=open(self.log, "w"), stderr=subprocess.STDOUT,
                                        preexec_fn=limit, env=env)
        for _ in range(100):
            if "serving http" in open(self.log).read(): break
            if self.process.poll() is not None: break
            time.sleep(0.1)
    def alive(self): return self.process.poll() is None
    def status(self): return "alive" if self.alive() else f"dead (exit {self.process.returncode})"
    def figures(self):
        """(descriptors, sockets, threads, RSS in MB) of the console process."""
        try:
            fds, sockets = os.listdir(f"/proc/{self.process.pid}/fd"), 0
            for f in fds:
                try: sockets += os.readlink(f"/proc/{self.process.pid}/fd/{f}").startswith("socket:")
                except OSError: pass   # closed meanwhile
            status = open(f"/proc/{self.process.pid}/status").read()
            field = lambda n: int([l for l in status.split("\n") if l.startswith(n + ":")][0].split()[1])
            return len(fds), sockets, field("Threads"), field("VmRSS") / 1024
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return 0, 0, 0, 0.0
    def text(self): return open(self.log).read()
    def stop(self):
        if self.alive(): self.process.terminate()
        try: self.process.wait(10)
        except subprocess.TimeoutExpired: self.process.kill(); self.process.wait()

def request(port, path, method="GET", headers=None, body=b"", timeout=10):
    """(status, {lower-case name: [values]}, body); status 0 when no answer came."""
    headers = {"Host": f"127.0.0.1:{port}", **(headers or {})}
    lines = [f"{method} {path} HTTP/1.1"] + [f"{k}: {v}" for k, v in headers.items()]
    lines += [f"Content-Length: {len(body)}", "Connection: close"]
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
                if len(data) > 1 << 20: break
    except OSError:
        return 0, {}, b""
    if not data.startswith(b"HTTP/"): return 0, {}, data
    head, _, rest = data.partition(b"\r\n\r\n")
    head_lines = head.decode(errors="replace").split("\r\n")
    fields = {}
    for line in head_lines[1:]:
        name, _, value = line.partition(":")
        fields.setdefault(name.strip().lower(), []).append(value.strip())
    return int(head_lines[0].split(" ")[1]), fields, rest

def stream_socket(port, query, rcvbuf=None, headers=""):
    s = socket.socket()
    if rcvbuf: s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(15)
    s.connect(("127.0.0.1", port))
    s.sendall(f"GET /api/cameras/testpattern/stream.mjpg?{query} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{headers}\r\n".encode())
    return s

def read_parts(s, count, seconds=20):
    """Reads until `count` parts (boundaries) came; returns how many came."""
    data, deadline = b"", time.monotonic() + seconds
    while data.count(b"--mediaconsoleframe") < count and time.monotonic() < deadline:
        try: chunk = s.recv(65536)
        except socket.timeout: break
        if not chunk: break
        data += chunk
    return data.count(b"--mediaconsoleframe")

def wanted(name): return not only or name in only

# --- flood: 300 idle connections under a descriptor limit of 256 ----------------------------
if wanted("flood"):
    started = time.monotonic()
    console = Console("flood", ("--idle-timeout", "5"), nofile=256)
    before = console.figures()
    held = []
    for _ in range(300):
        try:
            s = socket.socket(); s.setblocking(False)
            s.connect_ex(("127.0.0.1", console.port)); held.append(s)
        except OSError: break
    time.sleep(2.0)
    during = console.figures()
    # What the idle connections were told: a 503 and a close (refused), or nothing yet (held).
    refused = closed_silently = silent = 0
    for s in held:
        try:
            data = s.recv(4096)
            if data.startswith(b"HTTP/1.1 503"): refused += 1
            elif not data: closed_silently += 1
        except BlockingIOError: silent += 1
        except OSError: closed_silently += 1
    status_during, _, _ = request(console.port, "/api/devices", timeout=5)
    alive_during = console.alive()
    # The idle ones are closed by the idle timeout (5 s here); then the console answers again.
    deadline, status_after = time.monotonic() + 20, 0
    while time.monotonic() < deadline and console.alive():
        time.sleep(1.0)
        status_after, _, _ = request(console.port, "/api/devices", timeout=5)
        if status_after == 200 and console.figures()[1] < before[1] + 10: break
    after = console.figures()
    check("flood: 300 idle connections under ulimit -n 256; the console lives and answers again",
          alive_during and console.alive() and status_after == 200 and refused > 0 and after[1] < before[1] + 10,
          f"{console.status()}; sockets held {before[1]} before, {during[1]} during, {after[1]} after; "
          f"of 300: {refused} refused with 503, {silent} held open, {closed_silently} closed without a word; "
          f"GET /api/devices during: HTTP {status_during}, after the idle timeout: HTTP {status_after}; "
          f"threads {before[2]} -> {during[2]} -> {after[2]} ({time.monotonic() - started:.0f} s)")
    for s in held: s.close()
    console.stop()

# --- host, origin, headers, spellings, events (one console) ----------------------------------
if wanted("host") or wanted("origin") or wanted("headers") or wanted("spellings") or wanted("events"):
    console = Console("origin")
    port = console.port
    if wanted("host"):
        results = {h: request(port, "/api/devices", headers={"Host": h})[0]
                   for h in ("evil.example", f"evil.example:{port}", f"127.evil.com:{port}", f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}")}
        foreign = [results[h] for h in ("evil.example", f"evil.example:{port}", f"127.evil.com:{port}")]
        own = [results[h] for h in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}")]
        check("host: a foreign Host is refused, loopback names pass",
              all(400 <= s < 500 for s in foreign) and all(s == 200 for s in own),
              ", ".join(f"{h} HTTP {s}" for h, s in results.items()))
    if wanted("origin"):
        status, _, body = request(port, "/api/cameras/testpattern/controls", "POST",
                                  {"Origin": "http://evil.example", "Content-Type": "text/plain"}, b'{"brightness": 1}')
        reached = b"no controls" in body or b"testpattern" in body
        status2, _, body2 = request(port, "/api/cameras/testpattern/controls", "POST", {"Content-Type": "text/plain"}, b'{"brightness": 1}')
        reached2 = b"no controls" in body2 or b"testpattern" in body2
        check("origin: a cross-origin text/plain POST of JSON is refused before the camera",
              status in (403, 415) and not reached and status2 == 415 and not reached2,
              f"Origin evil.example, text/plain: HTTP {status} ({body[:70]!r}); same origin, text/plain: HTTP {status2} ({body2[:50]!r})")
        starts = console.text().count("started testpattern")
        s1, _, _ = request(port, "/api/cameras/testpattern/stream.mjpg?width=320&height=240", headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "image"}, timeout=3)
        s2, _, _ = request(port, "/api/cameras/testpattern/stream.mjpg?width=320&height=240", headers={"Origin": "http://evil.example"}, timeout=3)
        time.sleep(0.5)
        started = console.text().count("started testpattern") - starts
        check("origin: a stream asked by another site (an <img> there; an Origin) starts no camera",
              started == 0 and s1 == 403 and s2 == 403, f"Sec-Fetch-Site cross-site: HTTP {s1}; Origin evil.example: HTTP {s2}; captures started {started}")
    if wanted("headers"):
        missing = {}
        for path in ("/", "/api/devices", "/assets/nothing", "/api/cameras/testpattern/stream.mjpg?format=NOPE"):
            status, fields, _ = request(port, path)
            want = {"x-frame-options": "DENY", "x-content-type-options": "nosniff", "referrer-policy": "no-referrer"}
            gone = [k for k, v in want.items() if fields.get(k, [""])[0].lower() != v.lower()]
            if "frame-ancestors 'none'" not in fields.get("content-security-policy", [""])[0]: gone.append("content-security-policy")
            missing[f"{path} ({status})"] = gone
        check("headers: X-Frame-Options DENY, CSP frame-ancestors 'none', nosniff, Referrer-Policy on every answer",
              all(not g for g in missing.values()), "; ".join(f"{p}: {'all' if not g else 'missing ' + ', '.join(g)}" for p, g in missing.items()))
    if wanted("spellings"):
        starts = console.text().count("started testpattern")
        rss_before = console.figures()[3]
        viewers, parts = [], []
        for fps in ("120", "120/1", "0120", "240/2", "120.0", "120.00"):
            v = stream_socket(port, f"format=YUYV&width=320&height=240&fps={fps}")
            parts.append(read_parts(v, 2)); viewers.append(v)
        started = console.text().count("started testpattern") - starts
        status, _, body = request(port, "/api/status")
        running = len(json.loads(body).get("captures", [])) if status == 200 else None
        rss_during = console.figures()[3]
        for v in viewers: v.close()
        check("spellings: fps 120, 120/1, 0120, 240/2, 120.0, 120.00 share one capture",
              started == 1 and running == 1 and all(p >= 2 for p in parts),
              f"captures started {started}; /api/status: HTTP {status}, {running} running; parts per viewer {parts}; RSS {rss_before:.0f} -> {rss_during:.0f} MB")
    if wanted("events"):
        # 5 pages of one camera's events while it streams: one feed (one controlChanges() on a
        # device) started for all, each page gets the statistics, and it stops once, with the last.
        viewer = stream_socket(port, "format=YUYV&width=320&height=240&fps=30")
        read_parts(viewer, 1)
        log = lambda text: console.text().count(text)
        starts, stops = log("started the events of testpattern"), log("stopped the events of testpattern")
        sel, stats = selectors.DefaultSelector(), {}
        for i in range(5):
            page = socket.create_connection(("127.0.0.1", port), timeout=5)
            page.sendall(f"GET /api/cameras/testpattern/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            page.setblocking(False); sel.register(page, selectors.EVENT_READ, i); stats[i] = 0
        deadline = time.monotonic() + 10
        while min(stats.values()) < 2 and time.monotonic() < deadline:
            for key, _ in sel.select(0.5):
                try: stats[key.data] += key.fileobj.recv(65536).count(b"event: stats")
                except (BlockingIOError, OSError): pass
        status, _, body = request(port, "/api/status")
        during = json.loads(body).get("cameraEventPages") if status == 200 else None
        for key in list(sel.get_map().values()): key.fileobj.close()
        viewer.close()
        deadline = time.monotonic() + 10   # a page that went is noticed at the second write after
        while log("stopped the events of testpattern") == stops and time.monotonic() < deadline: time.sleep(0.2)
        time.sleep(1.0)
        after = json.loads(request(port, "/api/status")[2] or b"{}").get("cameraEventPages")
        started, stopped = log("started the events of testpattern") - starts, log("stopped the events of testpattern") - stops
        check("events: 5 pages of one camera's events share one feed, stopped when the last goes",
              started == 1 and stopped == 1 and during == {"testpattern": 5} and min(stats.values()) >= 2 and after == {},
              f"feeds started {started}, stopped {stopped}; /api/status cameraEventPages {during} while open, {after} after; "
              f"stats events per page {sorted(stats.values())}")
    console.stop()

# --- token --------------------------------------------------------------------------------------
if wanted("token"):
    secret = "s3cret;=,x y"
    console = Console("token", ("--token", secret))
    status, fields, _ = request(console.port, "/?token=s3cret%3B%3D%2Cx%20y")
    cookie = fields.get("set-cookie", [""])[0]
    pair = cookie.split(";")[0]
    name, _, value = pair.partition("=")
    safe = value != "" and all(c.isalnum() or c in "-._~%" for c in value)
    script, _, _ = request(console.port, "/assets/app.js", headers={"Cookie": pair})
    post_cookie, _, _ = request(console.port, "/api/cameras/testpattern/controls", "POST",
                                {"Cookie": pair, "Content-Type": "application/json"}, b'{"brightness": 1}')
    post_page, _, _ = request(console.port, "/api/cameras/testpattern/controls", "POST",
                              {"Cookie": pair, "Content-Type": "application/json", "Origin": f"http://127.0.0.1:{console.port}"}, b'{"brightness": 1}')
    console.stop()
    check("token: the cookie's name carries the port, its value is encoded, it loads the page's script",
          status == 200 and name == f"media-console-token-{console.port}" and safe and script == 200,
          f"GET /?token=: HTTP {status}, Set-Cookie {cookie!r}; app.js with it: HTTP {script}")
    check("token: the cookie alone changes nothing (POST without Origin 403; the page's own, with its Origin, reaches the camera)",
          post_cookie in (401, 403) and post_page == 400,
          f"cookie only: HTTP {post_cookie}; cookie and the page's Origin: HTTP {post_page} (400: the test pattern has no controls)")
    path = os.path.join(out, "console-token-file")
    with open(path, "w") as f: f.write("fromfile42\n")
    os.chmod(path, 0o600)
    console = Console("token-file", ("--token-file", path))
    cmdline = open(f"/proc/{console.process.pid}/cmdline", "rb").read() if console.alive() else b""
    with_file = request(console.port, "/api/devices", headers={"Authorization": "Bearer fromfile42"})[0]
    without = request(console.port, "/api/devices")[0]
    console.stop()
    console = Console("token-env", env={**os.environ, "MEDIA_CONSOLE_TOKEN": "fromenv42"})
    with_env = request(console.port, "/api/devices", headers={"Authorization": "Bearer fromenv42"})[0]
    without_env = request(console.port, "/api/devices")[0]
    console.stop()
    check("token: --token-file and MEDIA_CONSOLE_TOKEN, not on the command line (ps)",
          with_file == 200 and without == 401 and b"fromfile42" not in cmdline and with_env == 200 and without_env == 401,
          f"--token-file: with it HTTP {with_file}, without HTTP {without}, in ps: {b'fromfile42' in cmdline}; "
          f"MEDIA_CONSOLE_TOKEN: with it HTTP {with_env}, without HTTP {without_env}")

# --- stalled viewers: their sockets closed within a minute -------------------------------------
if wanted("stalled"):
    console = Console("stalled", ("--write-timeout", "5"))
    port = console.port
    before = console.figures()
    reader = stream_socket(port, "format=YUYV&width=1280&height=720&fps=30")
    read_parts(reader, 1)
    stalled = [stream_socket(port, "format=YUYV&width=1280&height=720&fps=30", rcvbuf=4096) for _ in range(20)]
    started = time.monotonic()
    sel = selectors.DefaultSelector(); reader.setblocking(False); sel.register(reader, selectors.EVENT_READ)
    peak, closed_after = 0, None
    while time.monotonic() - started < 60:
        for _ in sel.select(0.5):
            try:
                while reader.recv(1 << 20): pass
            except (BlockingIOError, OSError): pass
        sockets = console.figures()[1]
        peak = max(peak, sockets)
        if time.monotonic() - started > 3 and sockets <= before[1] + 1:
            closed_after = time.monotonic() - started; break
    after = console.figures()
    sendq = subprocess.run(["ss", "-tnH", "state", "established", f"sport = :{port}"], capture_output=True, text=True).stdout.split("\n")
    queued = [int(l.split()[1]) for l in sendq if l.strip()]
    dropped = console.text().count("dropped a stalled viewer")
    for s in stalled: s.close()
    reader.close()
    check("stalled: 20 viewers that never read have their server-side sockets closed within a minute",
          closed_after is not None and console.alive(),
          f"sockets {before[1]} before, {peak} at most, {after[1]} after {time.monotonic() - started:.0f} s"
          f"{'' if closed_after is None else f' (closed after {closed_after:.0f} s)'}; {dropped} dropped from the capture; "
          f"established with Send-Q > 0 at the end: {sum(1 for q in queued if q > 0)} (largest {max(queued, default=0) / 1e6:.2f} MB)")
    console.stop()

# --- slowloris: requests trickled a byte at a time are cut off ---------------------------------
if wanted("slowloris"):
    # 10 trickle the request line, 10 send it whole and trickle a header line, 2 send a whole head
    # and trickle the body; none ever ends its request. Each sends one byte every 2 s, so a byte
    # read is always newer than the timeouts (5 s here): only a deadline not reset by bytes cuts them.
    console = Console("slowloris", ("--idle-timeout", "5"), ("--write-timeout", "5"))
    port = console.port
    before = console.figures()
    line = b"GET /api/devices HTTP/1.1\r\n"
    host = f"Host: 127.0.0.1:{port}\r\n".encode()
    post = (b"POST /api/cameras/testpattern/controls HTTP/1.1\r\n" + host
            + b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
    kinds = ["request lines"] * 10 + ["header lines"] * 10 + ["bodies"] * 2
    heads = [(b"", line * 4)] * 10 + [(line + host, b"X-Slow: " + b"a" * 200)] * 10 + [(post, b" " * 1000)] * 2
    sockets, pending, closed_at = [], {}, {}
    started = time.monotonic()
    for i, (sent, rest) in enumerate(heads):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        if sent: s.sendall(sent)
        s.setblocking(False)
        sockets.append(s); pending[i] = rest
    next_byte, answered, peak = started, None, before[1]
    while len(closed_at) < len(sockets) and time.monotonic() - started < 40:
        now = time.monotonic()
        for i, s in enumerate(sockets):
            if i in closed_at: continue
            try:   # the server's close (or an error answer) shows as EOF, a reset or a status line
                data = s.recv(4096)
                if data == b"" or data.startswith(b"HTTP/"): closed_at[i] = now - started; continue
            except BlockingIOError: pass
            except OSError: closed_at[i] = now - started; continue
            if now >= next_byte and pending[i]:
                try: s.send(pending[i][:1]); pending[i] = pending[i][1:]
                except OSError: closed_at[i] = now - started
        if now >= next_byte: next_byte = now + 2.0
        if answered is None and now - started > 3:
            answered = request(port, "/api/devices", timeout=5)[0]   # others are served meanwhile
            peak = max(peak, console.figures()[1])
        time.sleep(0.1)
    after = console.figures()
    for s in sockets: s.close()
    def closed(kind):
        times = [closed_at[i] for i, k in enumerate(kinds) if k == kind and i in closed_at]
        return f"{len(times)}/{kinds.count(kind)} {kind}" + (f" after {min(times):.0f}-{max(times):.0f} s" if times else "")
    check("slowloris: 22 requests trickled a byte every 2 s (request line, header lines, body) are closed within 30 s",
          console.alive() and len(closed_at) == len(sockets) and max(closed_at.values()) <= 30 and answered == 200,
          f"closed {closed('request lines')}, {closed('header lines')}, {closed('bodies')} "
          f"(watched {time.monotonic() - started:.0f} s); GET /api/devices meanwhile: HTTP {answered}; "
          f"sockets {before[1]} -> {peak} -> {after[1]}")
    console.stop()

# --- encoding and keep-alive (one console, --write-timeout 5) -----------------------------------
if wanted("encoding") or wanted("keepalive"):
    console = Console("encoding", ("--write-timeout", "5"))
    port = console.port
    def ask(s, timeout=10):
        """GET /api/status on the open connection `s`: (status, seconds); status 0 when closed or no answer."""
        started = time.monotonic()
        try:
            s.settimeout(timeout)
            s.sendall(f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = s.recv(65536)
                if not chunk: return 0, time.monotonic() - started
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            fields = [l.split(b":", 1) for l in head.split(b"\r\n")[1:]]
            length = int(next((v for k, v in fields if k.strip().lower() == b"content-length"), b"0"))
            while len(body) < length:
                chunk = s.recv(65536)
                if not chunk: return 0, time.monotonic() - started
                body += chunk
            return int(head.split(b" ")[1]), time.monotonic() - started
        except (OSError, ValueError, IndexError):
            return 0, time.monotonic() - started
    if wanted("keepalive"):
        kept = socket.create_connection(("127.0.0.1", port), timeout=10)
        first = ask(kept)[0]
        idle_from = time.monotonic()
    if wanted("encoding"):
        # 4 captures encoded at once while /api/status is asked every 0.5 s: the encoding must not
        # take the cooperative pool that serves HTTP (2 threads on 2 cores; it did, and viewers got
        # nothing and were dropped as stalled, /api/status took seconds). Two at 4K load a release
        # build; two 1180x2160 at 110-120 fps load a debug one (too narrow for the pattern's frame
        # counter, which a debug build draws slowly pixel by pixel at 4K).
        streams = [(3840, 2160, 30), (3840, 2160, 25), (1180, 2160, 120), (1180, 2160, 110)]
        sel, parts, closed = selectors.DefaultSelector(), {}, []
        for width, height, fps in streams:
            spec = f"{width}x{height} at {fps}"
            v = stream_socket(port, f"format=YUYV&width={width}&height={height}&fps={fps}")
            v.setblocking(False)
            sel.register(v, selectors.EVENT_READ, spec); parts[spec] = [0, b""]
        answers, stop = [], []
        def poll():
            time.sleep(1.0)
            while not stop:
                with socket.socket() as s:
                    try: s.settimeout(10); s.connect(("127.0.0.1", port)); answers.append(ask(s))
                    except OSError: answers.append((0, 10.0))
                time.sleep(0.5)
        poller = threading.Thread(target=poll); poller.start()
        started = time.monotonic()
        while time.monotonic() - started < 7:
            for key, _ in sel.select(0.1):
                try: data = key.fileobj.recv(1 << 20)
                except (BlockingIOError, OSError): continue
                if not data: sel.unregister(key.fileobj); closed.append(key.data); continue
                joined = parts[key.data][1] + data
                parts[key.data] = [parts[key.data][0] + joined.count(b"--mediaconsoleframe"), joined[-24:]]
        stop.append(True); poller.join()
        for key in list(sel.get_map().values()): key.fileobj.close()
        stalled = console.text().count("dropped a stalled viewer")
        latencies = sorted(seconds for _, seconds in answers)
        check("encoding: /api/status answers within 1 s while 4 captures stream (2 at 4K), each viewer gets frames",
              console.alive() and len(answers) >= 5 and all(status == 200 for status, _ in answers) and latencies[-1] < 1.0
              and not closed and stalled == 0 and min(count for count, _ in parts.values()) >= 1,
              f"/api/status: {len(answers)} asked, {sum(status != 200 for status, _ in answers)} failed, "
              f"{latencies[len(latencies) // 2] if latencies else 0:.3f} s median, {latencies[-1] if latencies else 0:.3f} s at most; "
              f"parts per viewer in 7 s: {', '.join(f'{spec} fps: {count}' for spec, (count, _) in parts.items())}; "
              f"{stalled} dropped as stalled, {len(closed)} closed")
    if wanted("keepalive"):
        # The write timeout (5 s) is for output a client does not take, not for a quiet connection.
        time.sleep(max(0.0, idle_from + 8 - time.monotonic()))
        second = ask(kept)[0]
        kept.close()
        check("keepalive: a keep-alive connection idle 8 s (--write-timeout 5, --idle-timeout 30) answers its second request",
              first == 200 and second == 200, f"first request HTTP {first}; after 8 s idle: HTTP {second or 'none (closed)'}")
    console.stop()

# --- load: 200 viewers of one stream for 30 s --------------------------------------------------
if wanted("load"):
    console = Console("load")
    port = console.port
    request(port, "/api/devices")
    time.sleep(1.0)
    before = console.figures()
    sel = selectors.DefaultSelector()
    counts, tails = {}, {}
    for i in range(200):
        s = stream_socket(port, "format=YUYV&width=320&height=240&fps=10")
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, i); counts[i] = 0; tails[i] = b""
    started = time.monotonic()
    peak = before
    next_sample = started + 5
    while time.monotonic() - started < 30:
        for key, _ in sel.select(0.5):
            try: data = key.fileobj.recv(1 << 20)
            except (BlockingIOError, OSError): continue
            if not data: sel.unregister(key.fileobj); continue
            joined = tails[key.data] + data
            counts[key.data] += joined.count(b"--mediaconsoleframe")
            tails[key.data] = joined[-24:]
        if time.monotonic() > next_sample:
            f = console.figures(); peak = tuple(max(a, b) for a, b in zip(peak, f)); next_sample += 5
    elapsed = time.monotonic() - started
    for key in list(sel.get_map().values()): key.fileobj.close()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        time.sleep(1.0)
        after = console.figures()
        if after[1] <= before[1] + 1 and after[3] <= before[3] + 30 and after[2] <= before[2] + 4: break
    frames = sorted(counts.values())
    check("load: 200 viewers of one stream for 30 s get frames; RSS and threads come back",
          console.alive() and frames[0] > 0 and after[3] <= before[3] + 30 and after[2] <= before[2] + 4,
          f"frames per viewer min {frames[0]}, median {frames[100]}, max {frames[-1]} in {elapsed:.0f} s (10 fps asked); "
          f"RSS {before[3]:.0f} -> {peak[3]:.0f} (peak) -> {after[3]:.0f} MB; threads {before[2]} -> {peak[2]} -> {after[2]}; "
          f"sockets {before[1]} -> {peak[1]} -> {after[1]}")
    console.stop()

if failures:
    print(f"console-hardening-check: {len(failures)} check(s) failed: {failures}")
    sys.exit(1)
