"""Tests of background_image.py: the picture's pixels, its PNG against its PPM, a solid colour.

Run by scripts/lint.sh (python3 -m unittest discover -s scripts/tools).
"""
import os, struct, subprocess, sys, tempfile, unittest, zlib

import background_image as tool

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "background_image.py")
RED, GREEN, BLUE, GREY = b"\xff\x00\x00", b"\x00\xff\x00", b"\x00\x00\xff", bytes([200, 100, 50])
BLACK, WHITE = b"\x00\x00\x00", b"\xff\xff\xff"


def pixel(rows, x, y):
    return rows[y][3 * x:3 * x + 3]


class PictureTests(unittest.TestCase):
    def test_quadrants_and_checkerboard(self):
        rows = tool.picture_rows(64, 48)     # centre (32, 24); the board spans x 16..47, y 8..39
        self.assertEqual(len(rows), 48)
        self.assertEqual({len(r) for r in rows}, {64 * 3})
        self.assertEqual(pixel(rows, 0, 0), RED)
        self.assertEqual(pixel(rows, 63, 0), GREEN)
        self.assertEqual(pixel(rows, 0, 47), BLUE)
        self.assertEqual(pixel(rows, 63, 47), GREY)
        self.assertEqual(pixel(rows, 31, 0), RED)      # the quadrants' borders: x 31|32, y 23|24
        self.assertEqual(pixel(rows, 32, 0), GREEN)
        self.assertEqual(pixel(rows, 0, 23), RED)
        self.assertEqual(pixel(rows, 0, 24), BLUE)
        self.assertEqual(pixel(rows, 32, 24), BLACK)   # x + y even
        self.assertEqual(pixel(rows, 33, 24), WHITE)
        self.assertEqual(pixel(rows, 16, 8), BLACK)    # the board's corners
        self.assertEqual(pixel(rows, 47, 39), BLACK)
        self.assertEqual(pixel(rows, 15, 8), RED)      # just outside it
        self.assertEqual(pixel(rows, 48, 39), GREY)
        self.assertEqual(pixel(rows, 16, 7), RED)

    def test_png_and_ppm_hold_the_same_pixels(self):
        folder = tempfile.mkdtemp()
        try:
            subprocess.run([sys.executable, "-S", TOOL, "picture", folder, "40", "30"], check=True)
            with open(os.path.join(folder, "background.png"), "rb") as file:
                png = file.read()
            with open(os.path.join(folder, "background.ppm"), "rb") as file:
                ppm = file.read()
        finally:
            subprocess.run(["rm", "-rf", folder])
        header = b"P6\n40 30\n255\n"
        self.assertTrue(ppm.startswith(header))
        self.assertEqual(len(ppm), len(header) + 40 * 30 * 3)
        self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
        chunks, at = {}, 8
        while at < len(png):
            length, kind = struct.unpack(">I4s", png[at:at + 8])
            data = png[at + 8:at + 8 + length]
            self.assertEqual(struct.unpack(">I", png[at + 8 + length:at + 12 + length])[0], zlib.crc32(kind + data))
            chunks[kind] = data
            at += 12 + length
        self.assertEqual(list(chunks), [b"IHDR", b"IDAT", b"IEND"])
        self.assertEqual(struct.unpack(">IIBBBBB", chunks[b"IHDR"]), (40, 30, 8, 2, 0, 0, 0))
        raw = zlib.decompress(chunks[b"IDAT"])
        stride = 1 + 40 * 3
        self.assertEqual({raw[y * stride] for y in range(30)}, {0})    # filter "none" on every row
        self.assertEqual(b"".join(raw[y * stride + 1:(y + 1) * stride] for y in range(30)), ppm[len(header):])


class SolidTests(unittest.TestCase):
    def test_solid_colour(self):
        done = subprocess.run([sys.executable, "-S", TOOL, "solid", "#0a0B1c", "2", "1"], capture_output=True, check=True)
        self.assertEqual(done.stdout, b"P6\n2 1\n255\n\x0a\x0b\x1c\x0a\x0b\x1c")


if __name__ == "__main__":
    unittest.main()
