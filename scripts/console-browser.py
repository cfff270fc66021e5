#!/usr/bin/env python3
# console-browser: the browser console (Examples/Console) in a real browser against real drivers.
# Boots the rig with the console serving vivid on 0.0.0.0:8080 with a token (the guest half is
# scripts/console-browser-guest.py), forwarded to a loopback port here, and drives Debian's headless
# chromium through its DevTools protocol (--remote-debugging-pipe: no extra packages) the way a
# person would use the page:
#   - the page lists the cameras (vivid's row) and shows vivid's preview (the MJPEG stream);
#   - a later screenshot of the preview differs from the first (the picture moves: vivid's clock);
#   - moving the brightness slider changes the camera's control (read back through the API,
#     which reads the driver);
#   - the emulated USB camera plugged in (in the guest) appears in the list without a reload.
# Screenshots (PNG) go to .build-console/browser-*.png. Prints each check's figure; exit status 0
# only when every check passed.
#   scripts/console-browser.py [--console PATH] [--emulator PATH]   (built here when not given)
import base64, json, os, secrets, select, socket, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, ".build-console")
failed = False

def check(ok, message):
    global failed
    print(("ok   " if ok else "FAIL ") + message, flush=True)
    failed |= not ok
    return ok

def swift(*arguments):
    """Runs swift with the project's environment (scripts/swift-environment.sh); its stdout."""
    command = ". scripts/swift-environment.sh; swift " + " ".join(arguments)
    result = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"console-browser: `swift {' '.join(arguments)}` failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return result.stdout.strip()

def option(name):
    """The value after `name` among the arguments, or None."""
    arguments = sys.argv[1:]
    return arguments[arguments.index(name) + 1] if name in arguments[:-1] else None

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

class DevTools:
    """Chromium's DevTools protocol over --remote-debugging-pipe: JSON messages, NUL-terminated,
    commands on the browser's fd 3, answers and events on its fd 4."""

    def __init__(self, url, profile):
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()
        browser = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                   "--remote-debugging-pipe", f"--user-data-dir={profile}", "--window-size=1280,1000", "about:blank"]
        # The browser's fds 3 and 4 are the pipes' ends (bash's redirections, then exec).
        shell = f'exec "$@" 3<&{to_browser_read} 4>&{from_browser_write}'
        self.process = subprocess.Popen(["bash", "-c", shell, "chromium"] + browser, pass_fds=(to_browser_read, from_browser_write),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=open(os.path.join(OUT, "browser-chromium.log"), "w"))
        os.close(to_browser_read)
        os.close(from_browser_write)
        self.buffer, self.next_id, self.session = b"", 0, None
        target = self.send("Target.createTarget", {"url": "about:blank"}, timeout=180)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Page.enable")
        self.send("Page.navigate", {"url": url})

    def send(self, method, params=None, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\0", 1)
                answer = json.loads(raw)
                if answer.get("id") == self.next_id:
                    if "error" in answer:
                        raise RuntimeError(f"{method}: {answer['error']}")
                    return answer.get("result", {})
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"{method}: no answer from chromium in {timeout} s (log: .build-console/browser-chromium.log)")
            ready, _, _ = select.select([self.from_browser], [], [], 1)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"{method}: chromium closed its pipe")
                self.buffer += chunk

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails'].get('text')}: {expression[:80]}")
        return result["result"].get("value")

    def wait_for(self, expression, seconds, what):
        """Polls `expression` in the page until it is truthy; its value, or None after `seconds`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.5)
        print(f"     (waited {seconds} s for {what})")
        return None

    def screenshot(self, name, clip=None):
        params = {"format": "png"}
        if clip:
            params["clip"] = dict(clip, scale=1)
        data = base64.b64decode(self.send("Page.captureScreenshot", params)["data"])
        path = os.path.join(OUT, f"browser-{name}.png")
        with open(path, "wb") as file:
            file.write(data)
        return data, path

    def close(self):
        try:
            self.send("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()

def say(port, word, seconds=180):
    """Tells the guest `word` on its control port; True once it answered ok. (QEMU accepts a
    forwarded connection before the guest listens, so no answer means: try again.)"""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
                connection.sendall(word.encode() + b"\n")
                if connection.recv(16).strip() == b"ok":
                    return True
        except OSError:
            pass
        time.sleep(1)
    return False

def main():
    os.makedirs(OUT, exist_ok=True)
    started = time.monotonic()
    # The binaries, when the caller has them (scripts/test.sh: console-check built the console and
    # the device tests' build has the emulator), else built here.
    console, emulator = option("--console"), option("--emulator")
    if not console:
        swift("build", "--package-path", "Examples/Console", "--scratch-path", os.path.join(ROOT, ".build-apps"))
        console = os.path.join(swift("build", "--package-path", "Examples/Console", "--scratch-path", os.path.join(ROOT, ".build-apps"),
                                     "--show-bin-path"), "media-console")
    if not emulator:
        emulator = os.path.join(swift("build", "--show-bin-path"), "usb-device-emulator")
        if not os.access(emulator, os.X_OK):
            swift("build", "--product", "usb-device-emulator")
    for path in (console, emulator):
        if not os.access(path, os.X_OK):
            sys.exit(f"console-browser: {path} is not an executable")
    print(f"build: {time.monotonic() - started:.0f} s", flush=True)

    web, control, token = free_port(), free_port(), secrets.token_hex(16)
    rig_log = open(os.path.join(OUT, "browser-rig.log"), "w")
    rig = subprocess.Popen([os.path.join(ROOT, "scripts/rig.sh"), "run", "--forward", f"{web}:8080", "--forward", f"{control}:9000",
                            "--timeout", "900", "--", "python3", "-S", "scripts/console-browser-guest.py", console, emulator, token],
                           cwd=ROOT, stdin=subprocess.DEVNULL, stdout=rig_log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{web}"
    browser = None
    try:
        # The guest boots and the console starts (its first start over 9p: 10-20 s, more when loaded).
        vivid = None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and rig.poll() is None and not vivid:
            try:
                with urllib.request.urlopen(f"{base}/api/devices?token={token}", timeout=10) as response:
                    cameras = json.load(response)["cameras"]
                vivid = next((c for c in cameras if c.get("driver") == "vivid"), None)
            except (OSError, ValueError, KeyError):
                time.sleep(2)
        if not check(vivid is not None, f"the console in the rig serves the device list with vivid in it "
                                       f"({time.monotonic() - started:.0f} s since the start)"):
            rig.terminate()
            rig.wait(timeout=60)
            print(open(os.path.join(OUT, "browser-rig.log")).read()[-3000:])
            return
        def controls():
            """The camera's controls by key, or None (said as a failure) when the console does not
            answer in 180 s: generous, as a guest kept off the CPU answers late, not wrongly."""
            started = time.monotonic()
            try:
                with urllib.request.urlopen(f"{base}/api/cameras/{vivid['id']}/controls?token={token}", timeout=180) as response:
                    return {c["key"]: c for c in json.load(response)}
            except (OSError, ValueError) as error:
                check(False, f"GET the camera's controls: no answer after {time.monotonic() - started:.0f} s ({error!r})")
                return None

        profile = tempfile.mkdtemp(prefix="console-browser-")
        step = time.monotonic()
        browser = DevTools(f"{base}/?token={token}", profile)
        rows = browser.wait_for("[...document.querySelectorAll('#cameras li.camera')].map(li => li.textContent).join(' | ')", 240,
                                "the camera rows")
        if not check(bool(rows) and "vivid" in rows.lower(), f"the page lists the cameras: {rows!r} ({time.monotonic() - step:.0f} s)"):
            print("     the page: " + str(browser.evaluate("location.href + ' (' + document.readyState + '): '"
                                                         " + document.body.innerText.slice(0, 600)")))
            browser.screenshot("page")
            return
        browser.evaluate("window.loadedOnce = 'yes'")   # gone if the page reloads
        # Choose vivid (a click on its row, as a person would), then wait for its preview.
        browser.evaluate(f"document.querySelector('#cameras li.camera[data-id=\"{vivid['id']}\"]').click()")
        size = browser.wait_for("(() => { const p = document.getElementById('preview');"
                                " return p.naturalWidth > 0 && p.src.includes('" + vivid["id"] + "') ? p.naturalWidth + 'x' + p.naturalHeight : ''; })()",
                                300, "the preview's first frame")
        status = browser.evaluate("document.getElementById('status').textContent")
        check(bool(size), f"the preview shows vivid's stream: {size} ({status})")
        rect = browser.evaluate("(() => { const r = document.getElementById('preview').getBoundingClientRect();"
                                " return {x: r.x, y: r.y, width: r.width, height: r.height}; })()")
        # The picture moves (vivid's clock and counter): a second screenshot differs from the
        # first. Taken until it does (up to 120 s): a starved guest delivers frames slowly, and
        # this judges the page, not the emulator's pace.
        first, _ = browser.screenshot("preview-1", rect)
        waited, second, second_path = time.monotonic(), first, None
        while second == first and time.monotonic() - waited < 120:
            time.sleep(1)
            second, second_path = browser.screenshot("preview-2", rect)
        check(first != second and rect["width"] > 0, f"a screenshot of the preview differs from the first after {time.monotonic() - waited:.0f} s"
                                                     f" ({len(first)} and {len(second)} bytes, {int(rect['width'])}x{int(rect['height'])}"
                                                     f" on the page; {second_path})")

        # Move the brightness slider: the page posts the control, the driver takes it.
        listed = controls()
        before = listed.get("brightness") if listed is not None else None
        if listed is not None and check(before is not None, f"vivid has a brightness control (value {before and before.get('value')})"):
            wanted = before["minimum"] + (before["maximum"] - before["minimum"]) // 4
            if wanted == before["value"]:
                wanted += before.get("step") or 1
            browser.wait_for("document.querySelector('.control[data-key=\"brightness\"] input') !== null", 60, "the controls")
            browser.evaluate(f"(() => {{ const i = document.querySelector('.control[data-key=\"brightness\"] input');"
                             f" i.value = {wanted}; i.dispatchEvent(new Event('input')); i.dispatchEvent(new Event('change')); }})()")
            value, deadline = None, time.monotonic() + 180
            while time.monotonic() < deadline:
                listed = controls()
                if listed is None:
                    break
                value = listed["brightness"]["value"]
                if value == wanted:
                    break
                time.sleep(0.5)
            shown = browser.evaluate("document.querySelector('.control[data-key=\"brightness\"] .value').textContent")
            check(value == wanted, f"the slider moved to {wanted}: the camera's brightness reads {value} (was {before['value']}), the page shows {shown}")

        # Plug the USB camera in (in the guest): the list follows without a reload.
        count = browser.evaluate("document.querySelectorAll('#cameras li.camera').length")
        step = time.monotonic()
        if check(say(control, "plug"), "the guest plugged the emulated USB camera in"):
            rows = browser.wait_for(f"document.querySelectorAll('#cameras li.camera').length > {count} &&"
                                    " [...document.querySelectorAll('#cameras li.camera')].map(li => li.textContent).join(' | ')",
                                    300, "the USB camera's row")
            same_page = browser.evaluate("window.loadedOnce === 'yes'")
            check(bool(rows) and same_page, f"the plugged camera appears without a reload after {time.monotonic() - step:.0f} s: {rows!r}"
                                            f" (same page: {same_page})")
        _, page_path = browser.screenshot("page")
        print(f"     the page: {page_path}")
    finally:
        if browser:
            browser.close()
        if rig.poll() is None:
            say(control, "end", seconds=30)
            try:
                rig.wait(timeout=120)
            except subprocess.TimeoutExpired:
                rig.terminate()
                rig.wait(timeout=60)
        rig_log.close()
    check(rig.returncode == 0, f"the rig's guest ended cleanly (exit {rig.returncode}; log .build-console/browser-rig.log)")
    print(f"time: {time.monotonic() - started:.0f} s")

main()
sys.exit(1 if failed else 0)
