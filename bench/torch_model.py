"""The PyTorch module of an actorps model, built from model.json alone (bench scripts only): dense,
conv (TF 'same'/'valid' padding, the odd cell at the bottom and right), max pooling, dropout, batch
normalisation (the layer's decay D, TF1's 0.99 by default, and epsilon 0.001: PyTorch momentum 1 - D), global average
pooling, residual blocks (identity or 1x1 projection shortcut), depthwise and separable
convolutions (grouped convolutions, then a 1x1 one), local response normalisation, the five
activations, NHWC
flattening as actorps does. build(model, arrays) loads the .npz's values by their TF names
(arrays=None: PyTorch's own initialisation, for training baselines)."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ACTIVATIONS = {"relu": nn.ReLU, "elu": nn.ELU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh,
               "leaky-relu": lambda: nn.LeakyReLU(0.2)}


def same_padding(size, k, stride):
    out = (size + stride - 1) // stride
    total = max((out - 1) * stride + k - size, 0)
    return total // 2, total - total // 2


class Window(nn.Module):
    """A conv or max pool over NCHW with TF's padding (the odd cell at the bottom and right)."""

    def __init__(self, op, k, stride, same, fill):
        super().__init__()
        self.op, self.k, self.stride, self.same, self.fill = op, k, stride, same, fill

    def forward(self, x):
        if self.same:
            top, bottom = same_padding(x.shape[2], self.k, self.stride)
            left, right = same_padding(x.shape[3], self.k, self.stride)
            if top or bottom or left or right:
                x = F.pad(x, (left, right, top, bottom), value=self.fill)
        return self.op(x)


class FlattenNHWC(nn.Module):
    def forward(self, x):
        return x.permute(0, 2, 3, 1).reshape(x.shape[0], -1) if x.dim() == 4 else x


class GlobalAverage(nn.Module):
    def forward(self, x):
        return x.mean(dim=(2, 3))


class BatchNorm(nn.Module):
    """Batch normalisation of NCHW images or of rows (after a dense layer)."""

    def __init__(self, channels, decay):
        super().__init__()
        self.bn = nn.BatchNorm1d(channels, eps=1e-3, momentum=1.0 - decay)

    def forward(self, x):
        if x.dim() == 4:
            return F.batch_norm(x, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias,
                                self.training, self.bn.momentum, self.bn.eps)
        return self.bn(x)


class Residual(nn.Module):
    def __init__(self, body, shortcut, act):
        super().__init__()
        self.body, self.shortcut, self.act = body, shortcut, act

    def forward(self, x):
        y = self.body(x) + (self.shortcut(x) if self.shortcut is not None else x)
        return self.act(y) if self.act is not None else y


def split_list(text):
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return out


def parse(text):
    if text.startswith("residual"):
        open_, close = text.index("["), text.rindex("]")
        after = text[close + 1:].split()
        return {"kind": "residual", "body": [parse(t) for t in split_list(text[open_ + 1:close])],
                "act": after[0] if after else None}
    words = text.split()
    kind, rest = words[0], words[1:]
    spec = {"kind": kind, "stride": None, "same": kind == "conv", "act": None}
    i = 0
    if kind in ("dense", "maxpool", "dropout", "avgpool"):
        spec["size"] = rest[0]
        i = 1
    elif kind in ("conv", "separable"):
        k, _, c = rest[0].split("x")
        spec["k"], spec["units"], spec["same"] = int(k), int(c), True
        i = 1
    elif kind == "depthwise":
        spec["k"], spec["same"] = int(rest[0].split("x")[0]), True
        i = 1
    elif kind == "lrn":
        lrn = {"radius": 5, "bias": 1.0, "alpha": 1.0, "beta": 0.5}
        for key, value in zip(rest[0::2], rest[1::2]):
            lrn[key] = float(value)
        spec["lrn"] = lrn
        return spec
    spec["decay"] = 0.99  # batchnorm: TF1's default
    while i < len(rest):
        if rest[i].startswith("decay"):  # "decay D" or "decay=D"
            value = rest[i][6:] if rest[i].startswith("decay=") else rest[i + 1]
            spec["decay"] = float(value)
            i += 1 if rest[i].startswith("decay=") else 2
            continue
        if rest[i] == "stride":
            spec["stride"] = int(rest[i + 1])
            i += 2
            continue
        if rest[i] in ("same", "valid"):
            spec["same"] = rest[i] == "same"
        else:
            spec["act"] = rest[i]
        i += 1
    return spec


def new_counters():
    return {"conv": 0, "dense": 0, "bn": 0, "block": 0, "depthwise": 0, "separable": 0}


class Builder:
    """Builds layers in creation order, naming variables as actorps does."""

    def __init__(self, arrays, dense_total):
        self.arrays, self.dense_total = arrays, dense_total

    def load(self, param, name, transform=lambda a: a):
        if self.arrays is not None:
            param.data = torch.from_numpy(np.ascontiguousarray(transform(self.arrays[name])))

    def conv(self, name, cin, cout, k, stride, same):
        conv = nn.Conv2d(cin, cout, k, stride=stride)
        self.load(conv.weight, name + "/weights", lambda a: a.transpose(3, 2, 0, 1))
        self.load(conv.bias, name + "/bias")
        return Window(conv, k, stride, same, 0.0)

    def depthwise(self, name, c, k, stride, same, bias=True):
        conv = nn.Conv2d(c, c, k, stride=stride, groups=c, bias=bias)
        self.load(conv.weight, name, lambda a: a.transpose(2, 3, 0, 1))  # [k, k, C, 1] -> [C, 1, k, k]
        return Window(conv, k, stride, same, 0.0)

    def layers(self, specs, shape, prefix, counters, top):
        """Returns (modules, output shape (h, w, c, flat))."""
        h, w, c, flat = shape
        out = []
        for s in specs:
            kind = s["kind"]
            if kind == "conv":
                name = "%sconv%d" % (prefix, counters["conv"])
                counters["conv"] += 1
                stride = s["stride"] or 1
                out.append(self.conv(name, c, s["units"], s["k"], stride, s["same"]))
                if s["same"]:
                    h, w = (h + stride - 1) // stride, (w + stride - 1) // stride
                else:
                    h, w = (h - s["k"]) // stride + 1, (w - s["k"]) // stride + 1
                c = s["units"]
            elif kind in ("depthwise", "separable"):
                name = "%s%s%d" % (prefix, kind, counters[kind])
                counters[kind] += 1
                stride = s["stride"] or 1
                if kind == "depthwise":
                    dw = self.depthwise(name + "/weights", c, s["k"], stride, s["same"])
                    self.load(dw.op.bias, name + "/bias")
                    out.append(dw)
                else:
                    pw = nn.Conv2d(c, s["units"], 1)
                    self.load(pw.weight, name + "/pointwise_weights", lambda a: a.transpose(3, 2, 0, 1))
                    self.load(pw.bias, name + "/bias")
                    out += [self.depthwise(name + "/depthwise_weights", c, s["k"], stride, s["same"], bias=False), pw]
                    c = s["units"]
                if s["same"]:
                    h, w = (h + stride - 1) // stride, (w + stride - 1) // stride
                else:
                    h, w = (h - s["k"]) // stride + 1, (w - s["k"]) // stride + 1
            elif kind == "maxpool":
                k = int(s["size"])
                stride = s["stride"] or k
                out.append(Window(nn.MaxPool2d(k, stride), k, stride, s["same"], float("-inf")))
                if s["same"]:
                    h, w = (h + stride - 1) // stride, (w + stride - 1) // stride
                else:
                    h, w = (h - k) // stride + 1, (w - k) // stride + 1
            elif kind == "dropout":
                out.append(nn.Dropout(float(s["size"])))
            elif kind == "lrn":  # PyTorch divides alpha by the window's size
                p = s["lrn"]
                size = 2 * int(p["radius"]) + 1
                out.append(nn.LocalResponseNorm(size, alpha=p["alpha"] * size, beta=p["beta"], k=p["bias"]))
            elif kind == "batchnorm":
                name = "%sbn%d" % (prefix, counters["bn"])
                counters["bn"] += 1
                channels = c if not flat else c
                bn = BatchNorm(channels, s["decay"])
                self.load(bn.bn.weight, name + "/gamma")
                self.load(bn.bn.bias, name + "/beta")
                self.load(bn.bn.running_mean, name + "/moving_mean")
                self.load(bn.bn.running_var, name + "/moving_variance")
                out.append(bn)
            elif kind == "avgpool":
                out.append(GlobalAverage())
                h, w, flat = 1, 1, True
            elif kind == "residual":
                bprefix = "%sblock%d/" % (prefix, counters["block"])
                counters["block"] += 1
                body, (bh, bw, bc, bflat) = self.layers(s["body"], (h, w, c, flat), bprefix, new_counters(), False)
                shortcut = None
                if (bh, bw, bc) != (h, w, c):
                    stride = (h + bh - 1) // bh
                    shortcut = self.conv(bprefix + "shortcut", c, bc, 1, stride, True)
                act = ACTIVATIONS[s["act"]]() if s["act"] else None
                out.append(Residual(nn.Sequential(*body), shortcut, act))
                h, w, c, flat = bh, bw, bc, bflat
                continue
            else:  # dense
                self.dense_seen = getattr(self, "dense_seen", 0) + (1 if top else 0)
                logits = top and self.dense_seen == self.dense_total
                name = "logits" if logits else "%sdense%d" % (prefix, counters["dense"])
                if not logits:
                    counters["dense"] += 1
                units = int(s["size"])
                linear = nn.Linear(h * w * c, units)
                self.load(linear.weight, name + "/weights", lambda a: a.T)
                self.load(linear.bias, name + "/bias")
                out += [FlattenNHWC(), linear]
                h, w, c, flat = 1, 1, units, True
            if s["act"]:
                out.append(ACTIVATIONS[s["act"]]())
        return out, (h, w, c, flat)


def build(model, arrays=None):
    """The model of model.json's fields (input, layers); arrays: the .npz's values by name, or None."""
    h, w, c = model["input"]
    specs = [parse(t) for t in model["layers"]]
    dense_total = sum(1 for s in specs if s["kind"] == "dense")
    modules, _ = Builder(arrays, dense_total).layers(specs, (h, w, c, False), "", new_counters(), True)
    return nn.Sequential(*modules)
