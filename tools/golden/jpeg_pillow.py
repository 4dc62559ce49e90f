#!/usr/bin/env python3
"""Pillow's side of the image data path (data/readers/jpeg, data/readers/png,
data/transforms/resize, data/transforms/jpeg_pipeline). Run by hand in a
throwaway venv with Pillow 13.0.0 (the reference: its resampler's pass order
is data/transforms/resize's) and NumPy from PyPI; never a dependency of the
build:

  python3 -m venv /tmp/pv && /tmp/pv/bin/pip install pillow==13.0.0 numpy

fixture DIR: small JPEGs and PNGs and what Pillow makes of them, as the files
the tests under tests/data read (tests/data/readers/testdata/jpeg):
  <case>.jpg          baseline and progressive, 4:2:0 and 4:4:4 color,
                      grayscale, Adobe CMYK (Pillow's encoder, fixed content)
  <case>.png          png_*: every PNG color type and bit depth (Pillow's
                      encoder where it writes that kind, else a small one
                      here: 2- and 4-bit gray, 16-bit, a palette shorter than
                      its indices, Adam7 interlacing, a gAMA chunk)
  <case>.ppm          Image.open(file).convert("RGB"): the decoded pixels
  scaled.1_<d>.ppm    scaled.jpg decoded at scale 1/d with draft() (d = 2, 4, 8)
  resize.<case>.<w>x<h>.ppm  that case's decoded pixels after
                      resize((w, h), Image.BILINEAR)
  resize.<case>.crop<l>_<t>_<cw>x<ch>.<w>x<h>.ppm  after crop((l, t, l + cw,
                      t + ch)) then that resize, as torchvision's
                      RandomResizedCrop does
  versions.txt        the Pillow, libjpeg-turbo and zlib that wrote them
PPM (binary P6) is what Pillow writes and any viewer shows.

  /tmp/pv/bin/python tools/golden/jpeg_pillow.py fixture tests/data/readers/testdata/jpeg

bench DIR: the peer of //tests/data/transforms:jpeg_pipeline_benchmark on the
JPEG sets it wrote under DIR (each subfolder one set): per image on one thread,
read and decode (Image.open, convert("RGB")), torchvision's RandomResizedCrop
(224, scale (0.08, 1), ratio (3/4, 4/3)) with its parameter sampling, the crop
resized by resize(BILINEAR, box=...), a horizontal flip with p = 0.5, and
ToTensor + Normalize with ImageNet's statistics as NumPy float32 [3, 224, 224].
Prints images/s per set as JSON lines:

  /tmp/pv/bin/python tools/golden/jpeg_pillow.py bench /tmp/jpeg_bench
"""
import argparse
import io
import json
import math
import os
import random
import struct
import sys
import time
import zlib

import numpy as np
from PIL import Image, features

SIDE = (17, 13)  # width, height: odd, so 4:2:0 has half-covered chroma blocks at the edges
SCALED_SIDE = (45, 37)
# name: (mode, save options)
CASES = {
    "baseline_420": ("RGB", dict(quality=85, subsampling="4:2:0")),
    "baseline_444": ("RGB", dict(quality=85, subsampling="4:4:4")),
    "progressive_420": ("RGB", dict(quality=85, subsampling="4:2:0", progressive=True)),
    "gray_baseline": ("L", dict(quality=85)),
    "gray_progressive": ("L", dict(quality=85, progressive=True)),
    "cmyk": ("CMYK", dict(quality=85)),
}
# Pillow BILINEAR resizes of the decoded cases: down, up, one axis only, and a
# large factor (the filter spans many pixels); Pillow 13 runs the vertical
# pass first where the height shrinks by more than twice the width: (25, 5),
# and a tall crop (20x30 at (8, 3)) resized to 24x24, as RandomResizedCrop
# does.
# (w, h) or (w, h, crop box (left, top, right, bottom)).
RESIZES = {
    "baseline_420": [(7, 5), (25, 17), (17, 6), (8, 13), (25, 5)],
    "scaled": [(7, 5), (20, 30), (24, 24, (8, 3, 28, 33))],
}
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def content(size, seed):
    """A deterministic picture with edges, gradients and texture."""
    w, h = size
    rng = np.random.RandomState(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 128 + 100 * np.sin(x / 3.0 + seed) * np.cos(y / 5.0)
    g = 255.0 * x / max(w - 1, 1)
    b = np.where((x - w / 2) ** 2 + (y - h / 2) ** 2 < (min(w, h) / 3) ** 2, 220.0, 30.0)
    rgb = np.stack([r, g, b], axis=-1) + rng.normal(0, 12, (h, w, 3))
    return Image.fromarray(np.clip(rgb, 0, 255).astype(np.uint8), "RGB")


def jpeg_bytes(image, options):
    out = io.BytesIO()
    image.save(out, "JPEG", **options)
    return out.getvalue()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def make_fixture(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    decoded = {}
    for seed, (name, (mode, options)) in enumerate(CASES.items()):
        data = jpeg_bytes(content(SIDE, seed).convert(mode), options)
        write(os.path.join(out_dir, name + ".jpg"), data)
        decoded[name] = Image.open(io.BytesIO(data)).convert("RGB")
        decoded[name].save(os.path.join(out_dir, name + ".ppm"))
    scaled = jpeg_bytes(content(SCALED_SIDE, 10), dict(quality=90, subsampling="4:2:0"))
    write(os.path.join(out_dir, "scaled.jpg"), scaled)
    for d in (2, 4, 8):
        image = Image.open(io.BytesIO(scaled))
        image.draft("RGB", (SCALED_SIDE[0] // d, SCALED_SIDE[1] // d))
        assert image.size == ((SCALED_SIDE[0] + d - 1) // d, (SCALED_SIDE[1] + d - 1) // d), image.size
        image.convert("RGB").save(os.path.join(out_dir, f"scaled.1_{d}.ppm"))
    decoded["scaled"] = Image.open(io.BytesIO(scaled)).convert("RGB")
    for name, sizes in RESIZES.items():
        for w, h, *box in sizes:
            image, label = decoded[name], f"{w}x{h}"
            if box:
                left, top, right, bottom = box[0]
                image, label = image.crop(box[0]), f"crop{left}_{top}_{right - left}x{bottom - top}.{w}x{h}"
            image.resize((w, h), Image.BILINEAR).save(os.path.join(out_dir, f"resize.{name}.{label}.ppm"))
    for name, data in png_cases():
        write(os.path.join(out_dir, name + ".png"), data)
        Image.open(io.BytesIO(data)).convert("RGB").save(os.path.join(out_dir, name + ".ppm"))
    versions = (f"Pillow {Image.__version__}, libjpeg-turbo {features.version('libjpeg_turbo')}, "
                f"zlib {features.version('zlib')}")
    write(os.path.join(out_dir, "versions.txt"), (versions + "\n").encode())
    total = sum(os.path.getsize(os.path.join(out_dir, f)) for f in os.listdir(out_dir))
    print(f"wrote {out_dir}: {len(os.listdir(out_dir))} files, {total} bytes, {versions}")


def pillow_png(image, **options):
    out = io.BytesIO()
    image.save(out, "PNG", **options)
    return out.getvalue()


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def pack_row(values, depth):
    """One row of samples (uint8 or uint16) as PNG stores them, MSB first."""
    if depth == 16:
        return values.astype(">u2").tobytes()
    if depth == 8:
        return values.astype(np.uint8).tobytes()
    per_byte = 8 // depth
    padded = np.zeros(-(-len(values) // per_byte) * per_byte, dtype=np.uint8)
    padded[:len(values)] = values
    shifts = np.arange(per_byte - 1, -1, -1) * depth
    return (padded.reshape(-1, per_byte) << shifts).sum(axis=1).astype(np.uint8).tobytes()


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def png_by_hand(samples, depth, color_type, chunks=b"", interlaced=False):
    """A PNG of `samples` ([H, W, channels] or [H, W]) with no filtering, for
    the kinds Pillow does not write."""
    samples = samples.reshape(samples.shape[0], samples.shape[1], -1)
    height, width = samples.shape[:2]
    passes = ADAM7 if interlaced else [(0, 0, 1, 1)]
    raw = b""
    for x0, y0, dx, dy in passes:
        sub = samples[y0::dy, x0::dx]
        if sub.size:
            raw += b"".join(b"\0" + pack_row(row.reshape(-1), depth) for row in sub)
    header = struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, int(interlaced))
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + chunks + png_chunk(b"IDAT", zlib.compress(raw, 9)) +
            png_chunk(b"IEND", b""))


def png_cases():
    """(name, PNG bytes): each color type and bit depth Pillow reads."""
    rng = np.random.RandomState(20)
    rgb = content(SIDE, 20)
    h, w = SIDE[1], SIDE[0]
    alpha = Image.fromarray(rng.randint(0, 256, (h, w)).astype(np.uint8), "L")
    low = rng.randint(0, 256, (h, w, 4)).astype(np.uint16)  # 16-bit samples: these under Pillow's 8 bits
    wide = np.asarray(rgb.convert("RGBA")).astype(np.uint16) * 256 + low
    gray = np.asarray(rgb.convert("L"))
    gray16 = rng.choice([0, 1, 7, 200, 255, 256, 300, 4095, 65535], (h, w)).astype(np.uint16)  # Pillow clips to 255
    palette = rng.randint(0, 256, 5 * 3).astype(np.uint8).tobytes()
    return [
        ("png_rgb", pillow_png(rgb)),
        ("png_rgba", pillow_png(Image.merge("RGBA", (*rgb.split(), alpha)))),  # convert("RGB") drops alpha
        ("png_gray", pillow_png(rgb.convert("L"))),
        ("png_gray_alpha", pillow_png(Image.merge("LA", (rgb.convert("L"), alpha)))),
        ("png_palette", pillow_png(rgb.quantize(40), transparency=3)),  # tRNS, which convert("RGB") ignores
        ("png_palette_4bit", pillow_png(rgb.quantize(12), bits=4)),
        ("png_gray_1bit", pillow_png(rgb.convert("1"))),
        ("png_gray_2bit_interlaced", png_by_hand(gray >> 6, 2, 0, interlaced=True)),
        ("png_gray_4bit", png_by_hand(gray >> 4, 4, 0)),
        # 4-bit indices into a palette of 5: Pillow shows the missing entries black.
        ("png_palette_short", png_by_hand(rng.randint(0, 16, (h, w)), 4, 3, png_chunk(b"PLTE", palette))),
        ("png_rgb16", png_by_hand(wide[..., :3], 16, 2)),
        ("png_rgba16", png_by_hand(wide, 16, 6)),
        ("png_gray16", png_by_hand(gray16, 16, 0)),
        ("png_gray_alpha16", png_by_hand(wide[..., [0, 3]], 16, 4)),
        # Adam7, and a gamma of 1.0 that Pillow records but does not apply.
        ("png_rgb_interlaced", png_by_hand(np.asarray(rgb), 8, 2, png_chunk(b"gAMA", struct.pack(">I", 100000)),
                                           interlaced=True)),
    ]


def random_resized_crop_params(width, height, rng, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3)):
    """torchvision.transforms.RandomResizedCrop.get_params, drawing from rng."""
    area = height * width
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(10):
        target_area = area * rng.uniform(scale[0], scale[1])
        aspect_ratio = math.exp(rng.uniform(log_ratio[0], log_ratio[1]))
        w = int(round(math.sqrt(target_area * aspect_ratio)))
        h = int(round(math.sqrt(target_area / aspect_ratio)))
        if 0 < w <= width and 0 < h <= height:
            return rng.randint(0, height - h), rng.randint(0, width - w), h, w
    in_ratio = width / height
    if in_ratio < min(ratio):
        w, h = width, int(round(width / min(ratio)))
    elif in_ratio > max(ratio):
        w, h = int(round(height * max(ratio))), height
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


def train_pipeline(path, rng, size=224):
    image = Image.open(path).convert("RGB")
    top, left, h, w = random_resized_crop_params(image.width, image.height, rng)
    image = image.resize((size, size), Image.BILINEAR, box=(left, top, left + w, top + h))
    if rng.random() < 0.5:
        image = image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    chw = np.asarray(image).transpose(2, 0, 1).astype(np.float32)  # a contiguous copy
    chw *= (1 / (255 * STD))[:, None, None]
    chw -= (MEAN / STD)[:, None, None]
    return chw


def bench(root, min_seconds):
    sets = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    for name in sets:
        paths = []
        for dirpath, _, files in sorted(os.walk(os.path.join(root, name))):
            paths += [os.path.join(dirpath, f) for f in sorted(files) if f.lower().endswith((".jpg", ".jpeg"))]
        rng = random.Random(0)
        for path in paths:  # warm-up: page cache, allocator
            train_pipeline(path, rng)
        rates = []
        start = time.perf_counter()
        while time.perf_counter() - start < min_seconds or len(rates) < 3:
            t0 = time.perf_counter()
            for path in paths:
                train_pipeline(path, rng)
            rates.append(len(paths) / (time.perf_counter() - t0))
        print(json.dumps({"set": name, "images": len(paths), "passes": len(rates),
                          "images_per_s": float(np.median(rates)), "pillow": Image.__version__,
                          "libjpeg_turbo": features.version("libjpeg_turbo"), "numpy": np.__version__,
                          "python": sys.version.split()[0]}))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    fixture = sub.add_parser("fixture")
    fixture.add_argument("dir")
    timing = sub.add_parser("bench")
    timing.add_argument("dir")
    timing.add_argument("--min_seconds", type=float, default=5.0)
    args = parser.parse_args()
    if args.command == "fixture":
        make_fixture(args.dir)
    else:
        bench(args.dir, args.min_seconds)


if __name__ == "__main__":
    main()
