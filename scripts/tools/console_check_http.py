#!/usr/bin/env python3
"""The browser console's HTTP checks, from outside as a browser would reach it.

Called by scripts/console-check.sh once the console (Examples/Console, started with --test-pattern)
serves on a loopback port:
    python3 scripts/tools/console_check_http.py PORT LOG
PORT is the console's port on 127.0.0.1, LOG the file its output goes to (some checks count lines
of it: captures started and stopped, stalled viewers dropped, event streams stopped). Checks the
device and format lists, the MJPEG stream's parts (whole JPEGs of the size asked), two viewers
sharing one capture, a stalled viewer dropped, the live events, paths that leave the page's files
and bad requests. Prints one line per check ("ok   NAME: FIGURE" or "FAIL NAME: FIGURE"); exit
status 1 when any failed.
"""
import argparse, json, socket, struct, sys, threading, time, urllib.request, urllib.error

# Set by main() from the command line.
port, log = 0, ""
base = ""
failures = []

def check(name, ok, figure):
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {figure}")
    if not ok: failures.append(name)

def get(path, method="GET", body=None, headers={}):
    request = urllib.request.Request(base + path, method=method, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()

def raw_status(path):
    # The path exactly as given (no client normalisation of ../ or %2e).
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk: break
            data += chunk
    return int(data.split(b" ")[1]) if data.startswith(b"HTTP/") else 0

def jpeg_size(jpeg):
    # Width and height from the SOFn marker; None unless the JPEG is whole (SOI ... EOI).
    if jpeg[:2] != b"\xff\xd8" or jpeg[-2:] != b"\xff\xd9": return None
    i = 2
    while i + 4 <= len(jpeg):
        if jpeg[i] != 0xFF: return None
        marker, length = jpeg[i + 1], struct.unpack(">H", jpeg[i + 2:i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            height, width = struct.unpack(">HH", jpeg[i + 5:i + 9])
            return width, height
        i += 2 + length
    return None

class Viewer:
    """One MJPEG viewer on a raw socket: reads the response head, then parts."""
    def __init__(self, query, receive_buffer=None):
        self.socket = socket.socket()
        if receive_buffer: self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.socket.settimeout(15)
        self.socket.connect(("127.0.0.1", port))
        self.socket.sendall(f"GET /api/cameras/testpattern/stream.mjpg?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        self.buffer = b""
        self.head = None
    def read_until(self, marker):
        while marker not in self.buffer:
            chunk = self.socket.recv(65536)
            if not chunk: raise EOFError("the server closed the stream")
            self.buffer += chunk
        index = self.buffer.index(marker)
        found, self.buffer = self.buffer[:index], self.buffer[index + len(marker):]
        return found
    def read_exact(self, count):
        while len(self.buffer) < count:
            chunk = self.socket.recv(65536)
            if not chunk: raise EOFError("the server closed the stream")
            self.buffer += chunk
        found, self.buffer = self.buffer[:count], self.buffer[count:]
        return found
    def part(self):
        if self.head is None:
            self.head = self.read_until(b"\r\n\r\n").decode()
            # Hummingbird streams the body chunked: undo the chunking into a plain byte stream.
            self.chunked = "transfer-encoding: chunked" in self.head.lower()
            self.raw, self.buffer = self.buffer, b""
        headers = self.read_body_until(b"\r\n\r\n").decode()
        length = int([h.split(":")[1] for h in headers.split("\r\n") if h.lower().startswith("content-length")][0])
        jpeg = self.read_body_exact(length)
        self.read_body_exact(2)
        return jpeg
    # The body's bytes (de-chunked), kept in self.body.
    def fill_body(self):
        if not hasattr(self, "body"): self.body = b""
        if not self.chunked:
            chunk = self.raw or self.socket.recv(65536)
            self.raw = b""
            if not chunk: raise EOFError("the server closed the stream")
            self.body += chunk
            return
        while b"\r\n" not in self.raw:
            chunk = self.socket.recv(65536)
            if not chunk: raise EOFError("the server closed the stream")
            self.raw += chunk
        size_line, rest = self.raw.split(b"\r\n", 1)
        size = int(size_line.split(b";")[0], 16)
        while len(rest) < size + 2:
            chunk = self.socket.recv(65536)
            if not chunk: raise EOFError("the server closed the stream")
            rest += chunk
        self.body += rest[:size]
        self.raw = rest[size + 2:]
        if size == 0: raise EOFError("the stream ended")
    def read_body_until(self, marker):
        if not hasattr(self, "body"): self.body = b""
        while marker not in self.body: self.fill_body()
        index = self.body.index(marker)
        found, self.body = self.body[:index], self.body[index + len(marker):]
        return found
    def read_body_exact(self, count):
        if not hasattr(self, "body"): self.body = b""
        while len(self.body) < count: self.fill_body()
        found, self.body = self.body[:count], self.body[count:]
        return found
    def close(self): self.socket.close()

def log_count(text):
    return open(log).read().count(text)

class Events:
    """One text/event-stream on a raw socket: (event, data) pairs; comments skipped."""
    def __init__(self, path):
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=15)
        self.socket.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        self.text = ""
        head = self.until("\r\n\r\n")
        self.status = int(head.split(" ")[1])
    def until(self, marker):
        while marker not in self.text:
            chunk = self.socket.recv(65536)
            if not chunk: raise EOFError("the server closed the events")
            self.text += chunk.decode(errors="replace")
        found, self.text = self.text.split(marker, 1)
        return found
    def next(self):
        while True:
            block = self.until("\n\n")
            lines = [l for l in block.split("\n") if l and not l.startswith(":") and not all(c in "0123456789abcdef\r" for c in l)]
            event = [l[7:] for l in lines if l.startswith("event: ")]
            data = [l[6:] for l in lines if l.startswith("data: ")]
            if event and data: return event[0].strip(), json.loads(data[0])
    def close(self): self.socket.close()

def wait_log(text, count, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if log_count(text) >= count: return True
        time.sleep(0.2)
    return False


def main():
    global port, log, base
    parser = argparse.ArgumentParser(description="The browser console's HTTP checks (scripts/console-check.sh).")
    parser.add_argument("port", type=int, help="the console's port on 127.0.0.1")
    parser.add_argument("log", help="the console's log file")
    arguments = parser.parse_args()
    port, log = arguments.port, arguments.log
    base = f"http://127.0.0.1:{port}"

    # Devices and formats.
    status, body = get("/api/devices")
    devices = json.loads(body) if status == 200 else {}
    names = [c["id"] for c in devices.get("cameras", [])]
    check("/api/devices lists the test pattern", status == 200 and "testpattern" in names,
          f"HTTP {status}, cameras {names}, {len(devices.get('screens', []))} screens, {len(devices.get('audio', []))} audio devices")
    status, body = get("/api/cameras/testpattern/formats")
    formats = [f["pixelFormat"] for f in json.loads(body)["formats"]] if status == 200 else []
    check("/api/cameras/testpattern/formats", status == 200 and "YUYV" in formats, f"HTTP {status}, {len(formats)} formats {formats}")
    status, body = get("/")
    check("GET / serves the page", status == 200 and b"<title>MediaDevices console</title>" in body, f"HTTP {status}, {len(body)} bytes")

    # The stream's first 3 parts, at the size asked.
    query = "format=YUYV&width=320&height=240&fps=30"
    viewer = Viewer(query)
    started = time.monotonic()
    sizes = [jpeg_size(viewer.part()) for _ in range(3)]
    elapsed = time.monotonic() - started
    head = viewer.head.split("\r\n")
    check("stream parts are JPEGs of the size asked", sizes == [(320, 240)] * 3 and "multipart/x-mixed-replace" in viewer.head.lower(),
          f"{head[0]}; parts {sizes} in {elapsed:.2f} s")
    viewer.close()
    time.sleep(1.0)
    check("the capture stops when its last viewer leaves", log_count("stopped testpattern") >= 1,
          f"{log_count('stopped testpattern')} stop(s) in the server log")

    # Two viewers at once, sharing one capture.
    starts_before = log_count("started testpattern YUYV 640x480")
    results = {}
    def watch(name):
        v = Viewer("format=YUYV&width=640&height=480&fps=30")
        try:
            results[name] = [jpeg_size(v.part()) for _ in range(10)]
        except Exception as error:
            results[name] = str(error)
        finally:
            time.sleep(0.5)
            v.close()
    threads = [threading.Thread(target=watch, args=(n,)) for n in ("a", "b")]
    for t in threads: t.start()
    for t in threads: t.join(30)
    starts = log_count("started testpattern YUYV 640x480") - starts_before
    check("two viewers at once both get frames from one capture",
          all(results.get(n) == [(640, 480)] * 10 for n in ("a", "b")) and starts == 1,
          f"viewer a {len(results.get('a', []))} parts, viewer b {len(results.get('b', []))} parts, capture started {starts} time(s)")

    # A stalled viewer (connects with a small receive buffer, never reads) and a second one reading
    # the same capture meanwhile, until the server drops the stalled one (once the socket buffers
    # are full and it has missed its frames): within 600 frames (a count, not a time: a busy machine
    # encodes fewer frames a second).
    query = "format=YUYV&width=1280&height=720&fps=30"
    stalled = Viewer(query, receive_buffer=4096)
    time.sleep(0.5)
    second = Viewer(query)
    started = time.monotonic()
    count, error, dropped_after = 0, None, None
    try:
        while count < 600 and time.monotonic() - started < 180.0:
            if jpeg_size(second.part()) == (1280, 720): count += 1
            if log_count("dropped a stalled viewer") >= 1:
                dropped_after = time.monotonic() - started
                break
        for _ in range(10):   # and the second one goes on after
            if jpeg_size(second.part()) == (1280, 720): count += 1
    except Exception as e:
        error = str(e)
    elapsed = time.monotonic() - started
    rate = count / elapsed
    # Counts, not rates: the machine may be busy (the figure shows the rate).
    check("a stalled viewer is dropped and does not stop a second one", error is None and dropped_after is not None and count >= 30,
          f"stalled viewer dropped after {dropped_after if dropped_after is None else round(dropped_after, 1)} s; "
          f"the second viewer got {count} parts in {elapsed:.1f} s ({rate:.1f} per s, the pattern runs at 30){'; ' + error if error else ''}")
    stalled.close(); second.close()

    # Live events (server-sent): the camera's statistics once a second while it streams, and every
    # event stream's sources stopped when its page goes (noticed at the second write after it left: a keep-alive every 2 s).
    viewer = Viewer("format=YUYV&width=320&height=240&fps=30")
    viewer.part()
    events = Events("/api/cameras/testpattern/events")
    stats = []
    try:
        while len(stats) < 2:
            name, data = events.next()
            if name == "stats": stats.append(data)
    except Exception as error:
        stats.append({"error": str(error)})
    check("camera events: stats once a second while it streams",
          len(stats) == 2 and all(s.get("viewers") == 1 for s in stats) and stats[1].get("delivered", 0) > stats[0].get("delivered", 0),
          f"HTTP {events.status}; {stats}")
    viewer.close()
    left = log_count("stopped the events of testpattern")
    events.close()
    check("camera events: stopped when the page goes", wait_log("stopped the events of testpattern", left + 1, 15),
          f"{log_count('stopped the events of testpattern')} stop(s) in the server log")
    events = Events("/api/events")
    events.close()
    check("device events (DeviceMonitor): open, and stopped when the page goes",
          events.status == 200 and wait_log("stopped device events", 1, 15), f"HTTP {events.status}")
    status, body = get("/api/audio/level")
    check("the level meter without a device gets 400", status == 400, f"HTTP {status}: {body.decode()[:100]}")
    status, body = get("/api/audio/level?device=alsa:nothing")
    check("the level meter of an unknown microphone gets 404", status == 404, f"HTTP {status}: {body.decode()[:100]}")

    # Paths that leave the page's own files.
    for path in ("/../../etc/passwd", "/%2e%2e/", "/%2e%2e/%2e%2e/etc/passwd", "/assets/..%2f..%2fPackage.swift", "/assets/../../Package.swift", "/assets/passwd"):
        status = raw_status(path)
        check(f"{path} gets 404", status == 404, f"HTTP {status}")

    # Bad requests.
    status, body = get("/api/cameras/testpattern/controls", "POST", b'{"brightness": 999}', {"Content-Type": "application/json"})
    check("a bad control value gets 400 with the library's text", status == 400 and b"testpattern" in body, f"HTTP {status}: {body.decode()[:160]}")
    status, body = get("/api/cameras/testpattern/controls", "POST", b"{not json", {"Content-Type": "application/json"})
    check("a body that is not JSON gets 400", status == 400, f"HTTP {status}: {body.decode()[:120]}")
    status, body = get("/api/cameras/testpattern/stream.mjpg?format=NOPE")
    check("an unknown pixel format gets 400", status == 400, f"HTTP {status}: {body.decode()[:120]}")
    status, body = get("/api/cameras/testpattern/stream.mjpg?width=abc&height=10")
    check("a size that is not a number gets 400", status == 400, f"HTTP {status}: {body.decode()[:120]}")
    status, body = get("/api/cameras/video99/formats")
    check("an unknown camera gets 404", status == 404, f"HTTP {status}: {body.decode()[:120]}")
    status, body = get("/api/devices")
    check("the server is still up after", status == 200, f"HTTP {status}")

    if failures:
        print(f"console-check: {len(failures)} check(s) failed: {failures}")
        sys.exit(1)

if __name__ == "__main__":
    main()
