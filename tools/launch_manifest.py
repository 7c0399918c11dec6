"""Read tilec launch documents and evaluate their size expressions.

A launch document (`tilec FILE -t T --emit=launch`, an export's
K.launch.json) is {"format": "tilec-launch/1", "kernels": [KERNEL, ...]};
docs/launch.md describes it.  Sizes (grid extents, tensor shapes) are
expression trees evaluated with C's semantics on 64-bit signed integers:
division truncates toward zero, % takes the dividend's sign, and what C
leaves undefined (overflow, division by zero, shifts out of range) is an
error here rather than a value.

This file has no dependencies beyond the standard library: the GPU tools
carry a copy of it next to themselves.
"""
import json

FORMAT = "tilec-launch/1"

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

# Integer dtypes a cast may name: (bits, signed).
CAST = {"i64": (64, True), "i32": (32, True), "i8": (8, True),
        "u8": (8, False), "i4": (4, True)}


class ExprError(ValueError):
    """An expression that cannot be evaluated (unknown name or operator,
    undefined behaviour in C)."""


def kernels(doc):
    """The kernel objects of a launch document (text or parsed)."""
    if isinstance(doc, (str, bytes)):
        doc = json.loads(doc)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError("not a tilec launch document (format %r)" %
                         (doc.get("format") if isinstance(doc, dict) else
                          type(doc).__name__))
    ks = doc.get("kernels")
    if not isinstance(ks, list):
        raise ValueError("launch document without a kernels array")
    return ks


def by_name(doc):
    """{kernel name: kernel object} of a launch document."""
    return {k["kernel"]: k for k in kernels(doc)}


def only(doc):
    """The one kernel of a launch document that holds exactly one."""
    ks = kernels(doc)
    if len(ks) != 1:
        raise ValueError("expected one kernel in the launch document, "
                         "found %d" % len(ks))
    return ks[0]


def _check(v):
    if not INT64_MIN <= v <= INT64_MAX:
        raise ExprError("signed overflow (%d does not fit in 64 bits)" % v)
    return v


def _div(a, b):
    if b == 0:
        raise ExprError("division by zero")
    q = abs(a) // abs(b)
    return _check(q if (a < 0) == (b < 0) else -q)


def _rem(a, b):
    if b == 0:
        raise ExprError("remainder by zero")
    return a - _div(a, b) * b


def _shift(a, b, left):
    if not 0 <= b < 64:
        raise ExprError("shift by %d" % b)
    if left:
        if a < 0:
            raise ExprError("left shift of a negative value")
        return _check(a << b)
    return a >> b


def _wrap(v, bits, signed):
    v &= (1 << bits) - 1
    if signed and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


_BINARY = {
    "+": lambda a, b: _check(a + b),
    "-": lambda a, b: _check(a - b),
    "*": lambda a, b: _check(a * b),
    "/": _div,
    "%": _rem,
    "<<": lambda a, b: _shift(a, b, True),
    ">>": lambda a, b: _shift(a, b, False),
    "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b),
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "&": lambda a, b: a & b,
    "^": lambda a, b: a ^ b,
    "|": lambda a, b: a | b,
    "ceildiv": lambda a, b: _check(_div(a, b) + int(_rem(a, b) > 0)),
    "min": min,
    "max": max,
}

_UNARY = {
    "neg": lambda a: _check(-a),
    "!": lambda a: int(a == 0),
    "~": lambda a: ~a,
}


# The env key of a device attribute ({"device": "sms"}: the SMs of the GPU
# a launch runs on, which a persistent kernel's grid reads); no name of a
# parameter or tunable has a dot.
def device_key(attr):
    return "device." + attr


def evaluate(e, env):
    """The value of expression tree e; env maps the names of scalar
    parameters and tunables to integers, and device_key("sms") to the
    SM count of the GPU (device_env)."""
    if not isinstance(e, dict):
        raise ExprError("not an expression: %r" % (e,))
    if "int" in e:
        return _check(int(e["int"]))
    if "device" in e:
        if e["device"] != "sms":
            raise ExprError("device attribute %r in a size expression" %
                            (e["device"],))
        v = env.get(device_key("sms"))
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ExprError("no SM count of the device (a persistent "
                            "kernel's grid needs one: device_env)")
        return v
    if "param" in e or "tunable" in e:
        name = e.get("param", e.get("tunable"))
        if name not in env:
            raise ExprError("no value for %s" % name)
        v = env[name]
        if isinstance(v, bool) or not isinstance(v, int):
            raise ExprError("%s is %r, not an integer" % (name, v))
        return _check(v)
    if "float" in e:
        raise ExprError("a float in a size expression")
    op, args = e.get("op"), e.get("args", [])
    if op == "&&":
        return int(evaluate(args[0], env) != 0 and evaluate(args[1], env) != 0)
    if op == "||":
        return int(evaluate(args[0], env) != 0 or evaluate(args[1], env) != 0)
    if op == "?:":
        return evaluate(args[1] if evaluate(args[0], env) else args[2], env)
    if op == "cast":
        if e.get("dtype") == "bool":
            return int(evaluate(args[0], env) != 0)
        if e.get("dtype") not in CAST:
            raise ExprError("a cast to %s in a size expression" %
                            e.get("dtype"))
        return _wrap(evaluate(args[0], env), *CAST[e["dtype"]])
    if op in _BINARY and len(args) == 2:
        return _BINARY[op](evaluate(args[0], env), evaluate(args[1], env))
    if op in _UNARY and len(args) == 1:
        return _UNARY[op](evaluate(args[0], env))
    raise ExprError("unknown operator %r with %d operands" % (op, len(args)))


def device_env(sms):
    """The env entries of a GPU with `sms` SMs (cuda_sms() reads them)."""
    return {device_key("sms"): int(sms)}


def env_of(kernel, scalars, sms=None):
    """The names an expression of `kernel` may use: its tunables, then the
    scalar values given (a dict), and the device's SMs where given."""
    env = dict(kernel.get("tunables", {}))
    env.update(scalars)
    if sms is not None:
        env.update(device_env(sms))
    return env


def grid(kernel, scalars, sms=None):
    """The grid (x, y, z) of one launch of `kernel` with these scalars on a
    GPU of `sms` SMs (needed where the grid reads them)."""
    env = env_of(kernel, scalars, sms)
    return [evaluate(g, env) for g in kernel["grid"]]


def reads_sms(e):
    """Whether expression tree e reads the device's SM count."""
    if not isinstance(e, dict):
        return False
    return "device" in e or any(reads_sms(a) for a in e.get("args", []))


def shape(param, kernel, scalars):
    """The extents of tensor parameter `param` of `kernel`."""
    env = env_of(kernel, scalars)
    return [evaluate(d, env) for d in param["shape"]]


def c_helpers(prefix):
    """C definitions of the integer functions to_c(e, prefix) calls, with
    tilec's meaning (ceildiv is a / b + (a % b > 0))."""
    return ("static long long %s_ceildiv(long long a, long long b)\n"
            "{\n\treturn a / b + (a %% b > 0);\n}\n\n"
            "static long long %s_min(long long a, long long b)\n"
            "{\n\treturn a < b ? a : b;\n}\n\n"
            "static long long %s_max(long long a, long long b)\n"
            "{\n\treturn a > b ? a : b;\n}\n" % (prefix, prefix, prefix))


def to_c(e, prefix):
    """Expression tree e as C over long long, for generated host code:
    names as written, the integer functions those of c_helpers(prefix)."""
    if "int" in e:
        return "%dLL" % e["int"] if e["int"] >= 0 else "(%dLL)" % e["int"]
    if "param" in e:
        return "(long long)%s" % e["param"]
    if "tunable" in e:
        return "(long long)%s" % e["tunable"]
    if "device" in e:
        # The host code's `sms`: the device's SM count, which it reads.
        return "(long long)sms"
    if "float" in e:
        raise ExprError("a float in a size expression")
    op, args = e["op"], [to_c(a, prefix) for a in e.get("args", [])]
    if op in ("ceildiv", "min", "max"):
        return "%s_%s(%s, %s)" % (prefix, op, args[0], args[1])
    if op == "neg":
        return "(-%s)" % args[0]
    if op in ("!", "~"):
        return "(%s%s)" % (op, args[0])
    if op == "?:":
        return "(%s ? %s : %s)" % tuple(args)
    if op == "cast":
        return "(long long)(%s)(%s)" % ({
            "i64": "long long", "i32": "int", "i8": "signed char",
            "u8": "unsigned char", "bool": "bool"}[e["dtype"]], args[0])
    if op in _BINARY or op in ("&&", "||"):
        return "(%s %s %s)" % (args[0], op, args[1])
    raise ExprError("unknown operator %r" % op)


# --- Tensor maps (docs/launch.md, "tensor_maps") ---------------------------

TMAP_BYTES = 192  # the 128-byte descriptor, the 32-bit "built" flag, padding
_ELEM_BYTES = {"f64": 8, "i64": 8, "f32": 4, "i32": 4, "f16": 2, "bf16": 2,
               "fp8e4m3": 1, "fp8e5m2": 1, "i8": 1, "u8": 1, "bool": 1}


def tensor_map(encode, m, param, ptr, extents):
    """Kernel argument bytes (TMAP_BYTES, a bytearray) of tensor map m of
    a launch document for a tensor at device address ptr with these
    extents (outermost first): built with `encode`, the CUDA driver's
    cuTensorMapEncodeTiled as a ctypes function, when the base is 16-byte
    aligned, the rows whole 16-byte multiples and no extent 0 (the
    runtime's rule); flagged unbuilt otherwise, so the kernel runs its
    loop without TMA.  `encode` may be None (never built)."""
    import ctypes
    e = _ELEM_BYTES[param["dtype"]]
    rank = len(extents)
    out = bytearray(TMAP_BYTES)
    if encode is None or ptr % 16 or min(extents) < 1 or extents[-1] * e % 16:
        return out
    dims = list(reversed(extents))
    strides, s = [], e
    for x in dims[:-1]:
        s *= x
        strides.append(s)
    raw = (ctypes.c_ubyte * (128 + 64))()
    at = (-ctypes.addressof(raw)) % 64
    desc = ctypes.addressof(raw) + at
    r = encode(ctypes.c_void_p(desc), {1: 0, 2: 1, 4: 2, 8: 4}[e], rank,
               ctypes.c_void_p(ptr), (ctypes.c_uint64 * rank)(*dims),
               (ctypes.c_uint64 * max(rank - 1, 1))(*strides),
               (ctypes.c_uint32 * rank)(*reversed(m["box"])),
               (ctypes.c_uint32 * rank)(*([1] * rank)), 0,
               {32: 1, 64: 2, 128: 3}[m["swizzle"]], 2, 0)
    if r == 0:
        out[:128] = bytes(raw)[at:at + 128]
        out[128:132] = (1).to_bytes(4, "little")
    return out


def aligned(kernel, env, ptrs):
    """Whether a launch of `kernel` (a launch document's entry) is
    aligned (docs/launch.md, "Aligned launches"), so its TILEC_ALIGNED=1
    build may run it: every tensor it lists under "aligned" starts on 16
    bytes (ptrs: device address by tensor name) with rows of whole 16
    bytes, and every tensor map would be built (tensor_map's rule; a
    driver that refused valid arguments is not foreseen here, as the
    runtime, which reads the built flag, does).  False when it lists
    none."""
    by_name = {p["name"]: p for p in kernel["params"]}
    names = kernel.get("aligned", [])
    if not names:
        return False
    for name in names:
        p = by_name[name]
        if ptrs[name] % 16:
            return False
        if p["rank"] >= 2:
            inner = evaluate(p["shape"][-1], env)
            bits = 4 if p["dtype"] == "i4" else 8 * _ELEM_BYTES[p["dtype"]]
            if inner * bits % 128:
                return False
    for m in kernel.get("tensor_maps", []):
        p = by_name[m["tensor"]]
        extents = [evaluate(e, env) for e in p["shape"]]
        if ptrs[m["tensor"]] % 16 or min(extents) < 1 or extents[-1] * _ELEM_BYTES[p["dtype"]] % 16:
            return False
    return True


def cuda_sms():
    """The SM count of the CUDA driver's current device (the context's),
    or None where there is none."""
    import ctypes
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        dev, sms = ctypes.c_int(0), ctypes.c_int(0)
        if lib.cuCtxGetDevice(ctypes.byref(dev)) or lib.cuDeviceGetAttribute(
                ctypes.byref(sms), 16, dev):  # MULTIPROCESSOR_COUNT
            return None
    except (OSError, AttributeError):
        return None
    return sms.value


def cuda_encoder():
    """cuTensorMapEncodeTiled of the CUDA driver as a ctypes function, or
    None where the driver has none."""
    import ctypes
    try:
        f = ctypes.CDLL("libcuda.so.1").cuTensorMapEncodeTiled
    except (OSError, AttributeError):
        return None
    P = ctypes.POINTER
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p,
                  P(ctypes.c_uint64), P(ctypes.c_uint64), P(ctypes.c_uint32),
                  P(ctypes.c_uint32), ctypes.c_int, ctypes.c_int, ctypes.c_int,
                  ctypes.c_int]
    return f


_CU = {}


def cuda_launch(kernel, env, func, grid, block, smem, stream, args):
    """Launch CUfunction `func` (an int) of launch-document kernel object
    `kernel` through the CUDA driver's cuLaunchKernel, with its tensor
    maps built after the arguments: what a launcher that cannot pass
    them itself (CuPy) does for kernels with `tensor_maps`.  args are the
    parameters in order: tensors as objects with .data.ptr (CuPy arrays)
    or ints (device addresses), scalars as NumPy scalars of the C type;
    env gives the scalars' values for the extents."""
    import ctypes
    if not _CU:
        lib = ctypes.CDLL("libcuda.so.1")
        _CU["launch"] = lib.cuLaunchKernel
        _CU["launch"].argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
            ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
        _CU["encode"] = cuda_encoder()
    keep, ptrs = [], {}
    for p, a in zip(kernel["params"], args):
        if p["kind"] == "tensor":
            ptrs[p["name"]] = a if isinstance(a, int) else int(a.data.ptr)
            keep.append(ctypes.c_void_p(ptrs[p["name"]]))
        else:
            keep.append(ctypes.create_string_buffer(a.tobytes(), a.nbytes))
    params = {p["name"]: p for p in kernel["params"]}
    for m in kernel.get("tensor_maps", []):
        p = params[m["tensor"]]
        b = tensor_map(_CU["encode"], m, p, ptrs[m["tensor"]],
                       [evaluate(e, env) for e in p["shape"]])
        keep.append((ctypes.c_ubyte * len(b)).from_buffer(b))
    argv = (ctypes.c_void_p * len(keep))(*[ctypes.addressof(k) for k in keep])
    r = _CU["launch"](ctypes.c_void_p(func), grid[0], grid[1], grid[2], block[0],
                      block[1], block[2], smem, ctypes.c_void_p(stream), argv, None)
    if r:
        raise RuntimeError(f"cuLaunchKernel: CUDA error {r}")
