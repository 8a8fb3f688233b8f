#!/usr/bin/env python3
"""An independent reference for engram's MiniLM: BERT uncased WordPiece tokenization and the
all-MiniLM-L6-v2 forward pass (post-LN BERT, exact-erf GELU, mean pooling over the attention mask,
L2 normalisation) in plain numpy, reading model.safetensors directly.

Usage: minilm_reference.py MODEL_DIR < texts.json   (a JSON array of strings)
Prints a JSON object {"ids": [[...], ...], "vectors": [[...], ...]}.
"""
import json
import math
import struct
import sys
import unicodedata

import numpy as np

MAX_PIECES = 256


def load_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, meta in header.items():
        if name == "__metadata__" or meta["dtype"] != "F32":
            continue  # the I64 position_ids buffer is not a weight
        a, b = meta["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype="<f4").reshape(meta["shape"])
    return out


def load_vocab(model_dir):
    tok = json.load(open(f"{model_dir}/tokenizer.json"))
    return tok["model"]["vocab"]


def is_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
            or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def basic_tokens(text):
    # Clean: drop control characters, whitespace to space; pad CJK; lower case; strip accents.
    chars = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or (unicodedata.category(ch).startswith("C") and ch not in "\t\n\r"):
            continue
        if ch in "\t\n\r" or unicodedata.category(ch) == "Zs":
            chars.append(" ")
        elif is_cjk(cp):
            chars.append(f" {ch} ")
        else:
            chars.append(ch)
    text = "".join(chars).lower()
    text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    out = []
    for word in text.split():
        cur = ""
        for ch in word:
            if is_punct(ch):
                if cur:
                    out.append(cur)
                    cur = ""
                out.append(ch)
            else:
                cur += ch
        if cur:
            out.append(cur)
    return out


def wordpiece(word, vocab):
    if len(word) > 100:
        return [vocab["[UNK]"]]
    pieces, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            sub = word[start:end] if start == 0 else "##" + word[start:end]
            if sub in vocab:
                found = vocab[sub]
                break
            end -= 1
        if found is None:
            return [vocab["[UNK]"]]
        pieces.append(found)
        start = end
    return pieces


def encode(text, vocab):
    ids = [vocab["[CLS]"]]
    for w in basic_tokens(text):
        ids.extend(wordpiece(w, vocab))
    ids = ids[: MAX_PIECES - 1]
    return ids + [vocab["[SEP]"]]


def layer_norm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def forward(ids, t, heads=12, layers=6):
    x = t["embeddings.word_embeddings.weight"][ids] + t["embeddings.position_embeddings.weight"][: len(ids)]
    x = x + t["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x.astype(np.float64), t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
    n, h = x.shape
    d = h // heads
    for i in range(layers):
        p = f"encoder.layer.{i}."
        lin = lambda v, name: v @ t[p + name + ".weight"].T + t[p + name + ".bias"]
        q = lin(x, "attention.self.query").reshape(n, heads, d).transpose(1, 0, 2)
        k = lin(x, "attention.self.key").reshape(n, heads, d).transpose(1, 0, 2)
        v = lin(x, "attention.self.value").reshape(n, heads, d).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(n, h)
        x = layer_norm(lin(ctx, "attention.output.dense") + x, t[p + "attention.output.LayerNorm.weight"], t[p + "attention.output.LayerNorm.bias"])
        inner = gelu(lin(x, "intermediate.dense"))
        x = layer_norm(lin(inner, "output.dense") + x, t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"])
    v = x.mean(0)
    return v / np.linalg.norm(v)


def main():
    model_dir = sys.argv[1]
    texts = json.load(sys.stdin)
    vocab = load_vocab(model_dir)
    tensors = load_safetensors(f"{model_dir}/model.safetensors")
    ids = [encode(s, vocab) for s in texts]
    vectors = [forward(np.array(i), tensors).tolist() for i in ids]
    json.dump({"ids": ids, "vectors": vectors}, sys.stdout)


if __name__ == "__main__":
    main()
