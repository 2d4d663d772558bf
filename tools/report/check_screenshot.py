#!/usr/bin/env python3
"""Is a PNG screenshot of the report page more than a blank page?

    python3 tools/report/check_screenshot.py page.png [--min-ink 0.03] [--min-colors 24]

Decodes the PNG with the standard library (zlib and the five PNG row filters; 8-bit RGB or RGBA,
not interlaced: what Chromium writes) and requires that at least --min-ink of the pixels differ
from the most common colour (the background) and that at least --min-colors distinct colours
appear (text alone is a few greys; plots add their colour scales). Exit 0 when it holds, 1 when
the page looks blank, 2 for a file that is not such a PNG.
"""
import argparse
import collections
import struct
import sys
import zlib


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG (bit depth {depth}, colour type {color}, interlace {interlace})")
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            upper_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - upper_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - upper_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else upper_left)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("png")
    parser.add_argument("--min-ink", type=float, default=0.03)
    parser.add_argument("--min-colors", type=int, default=24)
    args = parser.parse_args()
    try:
        width, height, channels, rows = read_png(args.png)
    except (OSError, ValueError, zlib.error, struct.error, TypeError) as e:
        print(f"check_screenshot: {args.png}: {e}", file=sys.stderr)
        return 2
    counts = collections.Counter()
    for row in rows[::2]:  # every other row and column: enough to judge, four times faster
        for x in range(0, width * channels, 2 * channels):
            counts[row[x:x + 3]] += 1
    total = sum(counts.values())
    background, most = counts.most_common(1)[0]
    ink = 1.0 - most / total
    print(f"check_screenshot: {args.png}: {width}x{height}, {len(counts)} colours, "
          f"{100 * ink:.1f}% of pixels differ from the background #{background.hex()}")
    if ink < args.min_ink or len(counts) < args.min_colors:
        print(f"check_screenshot: the page looks blank (needs >= {100 * args.min_ink:.0f}% ink and "
              f">= {args.min_colors} colours)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
