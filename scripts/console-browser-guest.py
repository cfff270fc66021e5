#!/usr/bin/env python3
# console-browser-guest CONSOLE EMULATOR TOKEN: the guest half of scripts/console-browser.py, run in
# the rig (`python3 -S`, with --forward HOST:8080 --forward HOST:9000). Loads vivid (a webcam
# input, with controls) and starts the browser console on 0.0.0.0:8080 with TOKEN (any address but
# loopback needs one), then obeys the host's words on port 9000, answering `ok` once each is done:
#   plug  plugs the emulated USB camera in (uvcvideo binds it, udevd names it): the hotplug the
#         page must show without a reload;
#   end   stops everything (the console, the camera, udevd) and exits.
import os, socket, subprocess, sys

def main():
    console, emulator, token = sys.argv[1:4]
    out = os.environ.get("MEDIADEVICES_RIG_OUT", "/tmp")
    # snd-aloop: a microphone and a speaker in the page's audio list (the page as a user sees it).
    for module in (["vivid", "n_devs=1", "node_types=1", "input_types=0"], ["vhci-hcd"], ["uvcvideo"], ["snd-aloop"]):
        subprocess.run(["modprobe", *module], check=True)
    quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children = [subprocess.Popen(["/lib/systemd/systemd-udevd"], **quiet)]
    with open(os.path.join(out, "console.log"), "w") as log:
        children.append(subprocess.Popen([console, "--host", "0.0.0.0", "--port", "8080", "--token", token],
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT))
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", 9000))
    listener.listen(1)
    print("console-browser-guest: listening", flush=True)
    try:
        while True:
            connection, _ = listener.accept()
            with connection:
                connection.settimeout(30)
                try:
                    word = connection.recv(64).decode().strip()
                except OSError:
                    continue
                if word == "plug":
                    with open(os.path.join(out, "usb-device-emulator.log"), "w") as log:
                        children.append(subprocess.Popen([emulator, "--camera", "MD-CAM-BROWSER"],
                                                         stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT))
                elif word != "end":
                    print(f"console-browser-guest: unknown word {word!r}", file=sys.stderr, flush=True)
                    continue
                connection.sendall(b"ok\n")
                if word == "end":
                    return
    finally:
        for child in reversed(children):
            child.terminate()
        for child in children:
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()

main()
