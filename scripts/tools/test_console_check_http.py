"""Tests of console_check_http.py's readers: JPEG sizes, the MJPEG stream (chunked or not), events.

Run by scripts/lint.sh (python3 -m unittest discover -s scripts/tools). The stream tests serve
hand-written HTTP answers from a loopback socket to the tool's own Viewer and Events classes.
"""
import json, socket, struct, threading, unittest

import console_check_http as tool


def segment(marker, payload):
    """A JPEG marker segment: FF, the marker, a length that counts itself, the payload."""
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def jpeg(width, height, sof=0xC0, end=True):
    """A small JPEG: SOI, APP0, DQT, SOFn (8-bit, 3 components), EOI."""
    data = b"\xff\xd8" + segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    data += segment(0xDB, b"\x00" + bytes(64))
    data += segment(sof, b"\x08" + struct.pack(">HH", height, width) + b"\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01")
    return data + (b"\xff\xd9" if end else b"")


class JPEGSizeTests(unittest.TestCase):
    def test_baseline_frame(self):
        self.assertEqual(tool.jpeg_size(jpeg(320, 240)), (320, 240))

    def test_progressive_frame(self):
        self.assertEqual(tool.jpeg_size(jpeg(1280, 720, sof=0xC2)), (1280, 720))

    def test_width_and_height_not_swapped(self):
        self.assertEqual(tool.jpeg_size(jpeg(16, 4096)), (16, 4096))

    def test_cut_jpeg_has_no_size(self):
        self.assertIsNone(tool.jpeg_size(jpeg(320, 240, end=False)))

    def test_no_start_of_image(self):
        self.assertIsNone(tool.jpeg_size(jpeg(320, 240)[2:]))

    def test_huffman_table_is_not_a_frame(self):
        # DHT (C4) sits among the SOFn markers' numbers but holds no size.
        self.assertIsNone(tool.jpeg_size(jpeg(320, 240, sof=0xC4)))


class Server:
    """Answers one connection on a loopback port with the bytes given, then closes it."""
    def __init__(self, answer):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.request = b""
        self.thread = threading.Thread(target=self.serve, args=(answer,))
        self.thread.start()

    def serve(self, answer):
        connection, _ = self.listener.accept()
        with connection:
            while b"\r\n\r\n" not in self.request:
                self.request += connection.recv(4096)
            connection.sendall(answer)
        self.listener.close()

    def __enter__(self):
        tool.port = self.port
        return self

    def __exit__(self, *_):
        self.thread.join(5)


def mjpeg_body(parts):
    body = b""
    for part in parts:
        body += b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n" % len(part) + part + b"\r\n"
    return body


def chunked(data, sizes):
    """DATA in chunks of the given sizes (the rest in one more), then the last chunk."""
    out, at = b"", 0
    for size in sizes + [len(data)]:
        piece = data[at:at + size]
        at += len(piece)
        if piece:
            out += b"%x\r\n" % len(piece) + piece + b"\r\n"
    return out + b"0\r\n\r\n"


class ViewerTests(unittest.TestCase):
    HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: multipart/x-mixed-replace; boundary=frame\r\n"

    def test_plain_stream(self):
        parts = [jpeg(320, 240), jpeg(640, 480)]
        with Server(self.HEAD + b"\r\n" + mjpeg_body(parts)) as server:
            viewer = tool.Viewer("format=YUYV&width=320")
            received = [viewer.part(), viewer.part()]
            viewer.close()
        self.assertEqual(received, parts)
        self.assertTrue(server.request.startswith(b"GET /api/cameras/testpattern/stream.mjpg?format=YUYV&width=320 HTTP/1.1\r\n"))

    def test_chunked_stream_split_inside_headers_and_images(self):
        # Chunk boundaries that fall inside a part's headers, inside a JPEG and inside "\r\n".
        parts = [jpeg(320, 240), jpeg(1280, 720, sof=0xC2)]
        body = mjpeg_body(parts)
        answer = self.HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(body, [7, 40, 1, 100, 3])
        with Server(answer):
            viewer = tool.Viewer("q=1")
            received = [viewer.part(), viewer.part()]
            self.assertRaises(EOFError, viewer.part)   # the last chunk ends the stream
            viewer.close()
        self.assertEqual(received, parts)
        self.assertEqual([tool.jpeg_size(p) for p in received], [(320, 240), (1280, 720)])


class EventsTests(unittest.TestCase):
    def test_events_skip_comments_and_chunk_sizes(self):
        stream = (b": keep-alive\n\n"
                  b"1f\r\n"                           # a chunk-size line (hex digits and \r) is skipped
                  b"event: stats\ndata: {\"viewers\": 1, \"delivered\": 30}\n\n"
                  b"event: other\n\n"                 # an event without data is skipped
                  b"event: hotplug\ndata: [1, 2]\n\n")
        answer = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + stream
        with Server(answer):
            events = tool.Events("/api/events")
            first, second = events.next(), events.next()
            events.close()
        self.assertEqual(events.status, 200)
        self.assertEqual(first, ("stats", {"viewers": 1, "delivered": 30}))
        self.assertEqual(second, ("hotplug", [1, 2]))


if __name__ == "__main__":
    unittest.main()
