#!/usr/bin/python3
"""Writes a user's own data from an MNIST-format IDX directory, for the tests and benchmarks:
  make_user_data.py npz IDX_DIR OUT.npz [N_TRAIN N_TEST]       Keras' layout, uint8 images, int64 labels, class_names
  make_user_data.py folder IDX_DIR OUT_DIR png|jpg [N_TRAIN N_TEST] [SIZE]
                                                              train/<class>/*.png|jpg and test/<class>/...
The first N_TRAIN / N_TEST examples of each set (default: all); SIZE (e.g. 32) scales the images
(nearest neighbour) and writes RGB. Class names are Fashion-MNIST's."""
import gzip, os, struct, sys
import numpy as np

NAMES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]

def idx(path):
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            data = gzip.open(p).read() if p.endswith(".gz") else open(p, "rb").read()
            dims = data[3]
            shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
            return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)
    sys.exit(f"make_user_data: {path}[.gz] not found")

def load(d, n_train, n_test):
    x_train, y_train = idx(f"{d}/train-images-idx3-ubyte"), idx(f"{d}/train-labels-idx1-ubyte")
    x_test, y_test = idx(f"{d}/t10k-images-idx3-ubyte"), idx(f"{d}/t10k-labels-idx1-ubyte")
    return x_train[:n_train], y_train[:n_train], x_test[:n_test], y_test[:n_test]

kind, src, out = sys.argv[1], sys.argv[2], sys.argv[3]
if kind == "npz":
    n = [int(a) for a in sys.argv[4:6]] or [None, None]
    x_train, y_train, x_test, y_test = load(src, *n)
    np.savez(out, x_train=x_train, y_train=y_train.astype(np.int64), x_test=x_test, y_test=y_test.astype(np.int64),
             class_names=np.array(NAMES[:int(max(y_train.max(), y_test.max())) + 1]))
else:
    from PIL import Image
    ext = sys.argv[4]
    n = [int(a) for a in sys.argv[5:7]] or [None, None]
    size = int(sys.argv[7]) if len(sys.argv) > 7 else 0
    x_train, y_train, x_test, y_test = load(src, *n)
    for split, xs, ys in (("train", x_train, y_train), ("test", x_test, y_test)):
        for i, (x, y) in enumerate(zip(xs, ys)):
            folder = os.path.join(out, split, f"{int(y)}-{NAMES[int(y)].replace('/', '-')}" if int(y) < 10 else str(y))
            os.makedirs(folder, exist_ok=True)
            img = Image.fromarray(x)
            if size:
                img = img.resize((size, size), Image.NEAREST).convert("RGB")
            img.save(os.path.join(folder, f"{i:06d}.{ext}"), **({"quality": 95} if ext == "jpg" else {}))
