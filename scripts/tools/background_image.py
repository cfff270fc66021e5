#!/usr/bin/env python3
"""The pictures scripts/wayland-session.sh sets as the test desktop's background, and what grim must see.

Called by scripts/wayland-session.sh (`bg`), inside the rig or on the host, under `/usr/bin/python3 -S`:
    python3 -S scripts/tools/background_image.py picture DIR WIDTH HEIGHT
        writes DIR/background.png (the background sway shows) and DIR/background.ppm (the same
        pixels in grim's format, to compare the screen with): four quadrants red, green, blue,
        grey (200,100,50) and a 32x32 one-pixel black/white checkerboard in the middle, which any
        scaling or filtering would blur
    python3 -S scripts/tools/background_image.py solid '#RRGGBB' WIDTH HEIGHT >EXPECTED.ppm
        writes a binary PPM (P6) of one colour to stdout
"""
import argparse, struct, sys, zlib


def picture_rows(w, h):
    """The picture's rows, each w RGB pixels as bytes."""
    rows = []
    for y in range(h):
        row = bytearray()
        for x in range(w):
            if abs(x - w // 2 + 0.5) < 16 and abs(y - h // 2 + 0.5) < 16:
                row += b"\xff\xff\xff" if (x + y) % 2 else b"\x00\x00\x00"
            elif y < h // 2:
                row += b"\xff\x00\x00" if x < w // 2 else b"\x00\xff\x00"
            else:
                row += b"\x00\x00\xff" if x < w // 2 else b"\xc8\x64\x32"
        rows.append(bytes(row))
    return rows


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def write_picture(out, w, h):
    rows = picture_rows(w, h)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(b"".join(b"\x00" + r for r in rows), 9)) + chunk(b"IEND", b"")
    open(out + "/background.png", "wb").write(png)
    open(out + "/background.ppm", "wb").write(b"P6\n%d %d\n255\n" % (w, h) + b"".join(rows))


def solid_ppm(color, w, h):
    """A P6 PPM of w x h pixels of COLOR ('#rrggbb')."""
    c = bytes.fromhex(color[1:])
    return b"P6\n%d %d\n255\n" % (w, h) + c * (w * h)


def main():
    parser = argparse.ArgumentParser(description="The test desktop's background pictures (scripts/wayland-session.sh bg).")
    commands = parser.add_subparsers(dest="command", required=True)
    picture = commands.add_parser("picture", help="write DIR/background.png and DIR/background.ppm")
    picture.add_argument("dir")
    solid = commands.add_parser("solid", help="a PPM of one colour ('#rrggbb') to stdout")
    solid.add_argument("color")
    for command in (picture, solid):
        command.add_argument("width", type=int)
        command.add_argument("height", type=int)
    arguments = parser.parse_args()
    if arguments.command == "picture":
        write_picture(arguments.dir, arguments.width, arguments.height)
    else:
        sys.stdout.buffer.write(solid_ppm(arguments.color, arguments.width, arguments.height))


if __name__ == "__main__":
    main()
