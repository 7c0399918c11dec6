"""Arrays described to the runtime as tilec_arg tensors: their data
pointer, dtype, shape, strides (in elements) and where the memory is.

NumPy arrays and torch tensors are read directly (cheap, and safe under
CUDA graph capture); anything else with __dlpack__ through its DLPack
capsule.  Nothing here checks an array against a kernel: the runtime
does (tilec_launch_checked).  What cannot be described (an unsupported
dtype) is passed as such, so the runtime's message names the parameter,
and a note saying what the array was is added to it.
"""
import ctypes
import glob
import numbers
import os
import sys

from . import _lib

# NumPy's and torch's dtype names -> tilec's.  bf16 tensors travel as
# uint16 bit patterns in NumPy, which has no bfloat16.
NUMPY = {"float64": "f64", "float32": "f32", "float16": "f16",
         "uint16": "bf16", "int64": "i64", "int32": "i32", "int8": "i8",
         "uint8": "u8", "bool": "bool"}
TORCH = {"float64": "f64", "float32": "f32", "float16": "f16",
         "bfloat16": "bf16", "int64": "i64", "int32": "i32", "int8": "i8",
         "uint8": "u8", "bool": "bool", "float8_e4m3fn": "fp8e4m3",
         "float8_e5m2": "fp8e5m2"}
# DLPack (type code, bits) -> tilec.
DLPACK = {(2, 64): "f64", (2, 32): "f32", (2, 16): "f16", (4, 16): "bf16",
          (0, 64): "i64", (0, 32): "i32", (0, 8): "i8", (1, 8): "u8",
          (6, 8): "bool", (1, 16): "bf16"}
DL_CPU, DL_CUDA, DL_CUDA_HOST, DL_ROCM = 1, 2, 3, 10

NO_DTYPE = 12  # TILEC_DTYPE_COUNT: refused, with the parameter named


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

_dtype_codes = {}


def _dtype(name):
    if name not in _dtype_codes:
        rt, _ = _lib.libs()
        _dtype_codes[name] = rt.tilec_dtype_from_name(name.encode())
    return _dtype_codes[name]


class _Keep:
    """What must live until the launch returns, and notes for messages."""

    def __init__(self, what, *objects):
        self.what = what
        self.objects = objects


def _tensor(a, data, dtype, shape, strides, memory, device, keep, what):
    n = len(shape)
    sh = (ctypes.c_int64 * max(n, 1))(*shape)
    st = (ctypes.c_int64 * max(n, 1))(*strides)
    a.kind = _lib.ARG_TENSOR
    a.data = data
    a.dtype = _dtype(dtype) if dtype else NO_DTYPE
    a.rank = n
    a.shape = sh
    a.strides = st
    a.memory, a.device = memory, device
    keep.append(_Keep(what if not dtype else None, sh, st))


def _is_torch(x):
    t = sys.modules.get("torch")
    return t is not None and isinstance(x, t.Tensor)


def _is_numpy(x):
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, np.ndarray)


def describe(a, value, keep, target):
    """Fill tilec_arg `a` from a Python value."""
    if _is_numpy(value):
        item = value.dtype.itemsize
        # Byte strides that are not whole elements cannot be row-major:
        # -1 makes the runtime say the tensor is not contiguous.
        strides = [s // item if s % item == 0 else -1 for s in value.strides]
        _tensor(a, value.ctypes.data if value.size else None,
                NUMPY.get(value.dtype.name), value.shape, strides,
                _lib.MEMORY_HOST, 0, keep,
                "a NumPy array of %s" % value.dtype.name)
        keep.append(_Keep(None, value))
        return
    if _is_torch(value):
        name = str(value.dtype).replace("torch.", "")
        dev = value.device
        memory = _lib.MEMORY_HOST if dev.type == "cpu" else _lib.MEMORY_DEVICE
        _tensor(a, value.data_ptr() if value.numel() else None,
                TORCH.get(name), tuple(value.shape), value.stride(), memory,
                (dev.index or 0) if dev.type != "cpu" else 0, keep,
                "a torch tensor of %s" % name)
        keep.append(_Keep(None, value))
        return
    if hasattr(value, "__dlpack__"):
        capsule = value.__dlpack__()
        p = _capsule_pointer(capsule, b"dltensor")
        # DLManagedTensor starts with its DLTensor.
        t = _DLTensor.from_address(p)
        shape = [t.shape[i] for i in range(t.ndim)]
        if t.strides:
            strides = [t.strides[i] for i in range(t.ndim)]
        else:
            strides = None
        code = (t.dtype.code, t.dtype.bits) if t.dtype.lanes == 1 else None
        data = (t.data or 0) + t.byte_offset
        memory = (_lib.MEMORY_HOST
                  if t.device.device_type in (DL_CPU, DL_CUDA_HOST)
                  else _lib.MEMORY_DEVICE)
        if strides is None:
            strides, acc = [0] * t.ndim, 1
            for d in range(t.ndim - 1, -1, -1):
                strides[d] = acc
                acc *= shape[d]
        _tensor(a, data or None, DLPACK.get(code), shape, strides, memory,
                t.device.device_id, keep,
                "a DLPack tensor of type code %s" % (code,))
        keep.append(_Keep(None, capsule, value))
        return
    if isinstance(value, numbers.Integral):
        a.kind = _lib.ARG_INT
        a.ivalue = int(value)
        return
    if isinstance(value, numbers.Real):
        a.kind = _lib.ARG_FLOAT
        a.fvalue = float(value)
        return
    raise TypeError("%s: a tensor (NumPy, torch, DLPack) or a number, not %s"
                    % ("argument '%s'" % a.name.decode() if a.name
                       else "an argument by position", type(value).__name__))


def notes(keep):
    """What the arrays without a tilec dtype were, for a message."""
    what = [k.what for k in keep if k.what]
    return " (given %s)" % "; ".join(what) if what else ""


def current_stream(target, items):
    """torch's current stream for a GPU launch on torch tensors (ROCm
    builds of torch name theirs cuda too); None (the default stream)
    otherwise."""
    if target not in ("cuda", "hip"):
        return None
    for _, v in items:
        if _is_torch(v) and v.device.type == "cuda":
            import torch
            return ctypes.c_void_p(torch.cuda.current_stream(v.device).cuda_stream)
    return None


_looked = []


def find_cuda_toolkit():
    """Where the runtime looks for NVRTC and cuda_fp16.h when neither
    TILEC_NVRTC nor CUDA_HOME says: a system toolkit first
    (/usr/local/cuda, the loader's path), then the nvidia-cuda-nvrtc and
    nvidia-cuda-runtime wheels a PyTorch environment has."""
    if _looked:
        return
    _looked.append("TILEC_NVRTC=%s" % os.environ.get("TILEC_NVRTC", ""))
    _looked.append("CUDA_HOME=%s" % os.environ.get("CUDA_HOME", ""))
    if os.environ.get("TILEC_NVRTC") or os.environ.get("CUDA_HOME") or \
            os.path.exists("/usr/local/cuda/include/cuda_fp16.h"):
        return
    for base in sys.path:
        nv = os.path.join(base, "nvidia")
        if not os.path.isdir(nv):
            continue
        libs = sorted(glob.glob(os.path.join(nv, "cuda_nvrtc", "lib",
                                             "libnvrtc.so*")))
        _looked.append(os.path.join(nv, "cuda_nvrtc", "lib"))
        if libs:
            os.environ["TILEC_NVRTC"] = libs[-1]
        inc = os.path.join(nv, "cuda_runtime")
        _looked.append(os.path.join(inc, "include"))
        if os.path.exists(os.path.join(inc, "include", "cuda_fp16.h")):
            os.environ["CUDA_HOME"] = inc
        if libs:
            return


def nvrtc_note():
    return "; NVRTC and the CUDA headers were looked for in: %s" % (
        ", ".join(_looked) or "the loader's path and /usr/local/cuda")
