"""Our checkpoint format (nn/checkpoint.h) written from Python, for the
golden fixtures of the PyTorch reference scripts (resnet20_torch.py,
lstm_torch.py)."""
import os
import struct
import tempfile

import torch

MAGIC = b"TSCKPT\x1a\n"
VERSION = 1
DTYPE_CODES = {torch.bool: 1, torch.uint8: 2, torch.int32: 3, torch.int64: 4,
               torch.float16: 5, torch.bfloat16: 6, torch.float32: 7, torch.float64: 8}


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def save_tensors(path, named):
    entries = []
    for name, t in named:
        t = t.detach().contiguous().cpu()
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        body = struct.pack("<I", len(name)) + name.encode() + struct.pack("<BI", DTYPE_CODES[t.dtype], t.dim())
        body += b"".join(struct.pack("<q", d) for d in t.shape) + struct.pack("<Q", len(raw)) + raw
        entries.append(body + struct.pack("<I", crc32c(body)))
    size = len(MAGIC) + 4 + 4 + 8 + sum(len(e) for e in entries) + 4
    data = MAGIC + struct.pack("<IIQ", VERSION, len(entries), size) + b"".join(entries)
    data += struct.pack("<I", crc32c(data))
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)))
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
