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
        rt = _lib.runtime()
        _dtype_codes[name] = rt.tilec_dtype_from_name(name.encode())
    return _dtype_codes[name]


MAX_RANK = 8  # the runtime's largest tensor rank (runtime/signature.c)


class Slot:
    """The shape and strides buffers of one tilec_arg, made once and
    reused by every call of a kernel (Kernel keeps them per thread), so
    a call fills numbers in instead of allocating ctypes arrays."""

    __slots__ = ("shape", "strides", "n")

    def __init__(self, a):
        self.fit(a, MAX_RANK)

    def fit(self, a, rank):
        """Buffers for `rank` dims; a larger rank than the runtime knows
        still gets its whole shape described (and refused there)."""
        self.n = max(rank, MAX_RANK)
        self.shape = (ctypes.c_int64 * self.n)()
        self.strides = (ctypes.c_int64 * self.n)()
        a.shape = self.shape


def _tensor(a, slot, data, code, shape, strides, memory, device):
    """Fill tensor argument `a`; strides None: row-major contiguous (the
    runtime's NULL)."""
    n = len(shape)
    if n > slot.n:
        slot.fit(a, n)
    a.kind = _lib.ARG_TENSOR
    a.data = data
    a.dtype = code
    a.rank = n
    slot.shape[:n] = shape
    if strides is None:
        a.strides = None
    else:
        slot.strides[:n] = strides
        a.strides = slot.strides
    a.memory = memory
    a.device = device


# Each NumPy or torch dtype seen: (tilec's dtype, or NO_DTYPE with what
# the array was for the message); dtype names are slow to compute.
_numpy_dtypes = {}
_torch_dtypes = {}


def _numpy_dtype(dt):
    e = _numpy_dtypes.get(dt)
    if e is None:
        name = NUMPY.get(dt.name) if dt.isnative else None
        if name:
            e = (_dtype(name), None)
        elif not dt.isnative:
            e = (NO_DTYPE, "a NumPy array of %s in non-native byte order "
                 "('%s')" % (dt.name, dt.str))
        else:
            e = (NO_DTYPE, "a NumPy array of %s" % dt.name)
        _numpy_dtypes[dt] = e
    return e


def _torch_dtype(dt):
    e = _torch_dtypes.get(dt)
    if e is None:
        name = str(dt).replace("torch.", "")
        e = ((_dtype(TORCH[name]), None) if name in TORCH
             else (NO_DTYPE, "a torch tensor of %s" % name))
        _torch_dtypes[dt] = e
    return e


class _ArrayInterface(ctypes.Structure):
    """PyArrayInterface, what ndarray.__array_struct__'s capsule holds:
    the data pointer and flags at C speed (ndarray.ctypes.data builds a
    Python object each time and costs about twice as much)."""
    _fields_ = [("two", ctypes.c_int), ("nd", ctypes.c_int),
                ("typekind", ctypes.c_char), ("itemsize", ctypes.c_int),
                ("flags", ctypes.c_int),
                ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
                ("strides", ctypes.POINTER(ctypes.c_ssize_t)),
                ("data", ctypes.c_void_p), ("descr", ctypes.c_void_p)]


NPY_ARRAY_C_CONTIGUOUS = 0x0001


def _numpy(a, slot, value, notes, keep):
    code, what = _numpy_dtype(value.dtype)
    if what:
        notes.append(what)
    capsule = value.__array_struct__
    ai = _ArrayInterface.from_address(_capsule_pointer(capsule, None))
    if ai.flags & NPY_ARRAY_C_CONTIGUOUS:
        strides = None
    else:
        item = ai.itemsize
        # Byte strides that are not whole elements cannot be row-major:
        # -1 makes the runtime say the tensor is not contiguous.
        strides = [s // item if s % item == 0 else -1
                   for s in value.strides]
    _tensor(a, slot, ai.data if value.size else None, code, value.shape,
            strides, _lib.MEMORY_HOST, 0)


def _torch(a, slot, value, notes, keep):
    code, what = _torch_dtype(value.dtype)
    if what:
        notes.append(what)
    if value.is_cuda:  # ROCm builds of torch name their GPUs cuda too
        memory, device = _lib.MEMORY_DEVICE, value.get_device()
    elif value.device.type == "cpu":
        memory, device = _lib.MEMORY_HOST, 0
    else:
        memory, device = _lib.MEMORY_DEVICE, max(value.get_device(), 0)
    _tensor(a, slot, value.data_ptr() if value.numel() else None, code,
            value.shape, None if value.is_contiguous() else value.stride(),
            memory, device)


def _int(a, slot, value, notes, keep):
    a.kind = _lib.ARG_INT
    a.ivalue = int(value)


def _float(a, slot, value, notes, keep):
    a.kind = _lib.ARG_FLOAT
    a.fvalue = float(value)


def _dlpack(a, slot, value, notes, keep):
    capsule = value.__dlpack__()
    p = _capsule_pointer(capsule, b"dltensor")
    # DLManagedTensor starts with its DLTensor.
    t = _DLTensor.from_address(p)
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = [t.strides[i] for i in range(t.ndim)] if t.strides else None
    code = (t.dtype.code, t.dtype.bits) if t.dtype.lanes == 1 else None
    name = DLPACK.get(code)
    if not name:
        notes.append("a DLPack tensor of type code %s" % (code,))
    data = (t.data or 0) + t.byte_offset
    memory = (_lib.MEMORY_HOST
              if t.device.device_type in (DL_CPU, DL_CUDA_HOST)
              else _lib.MEMORY_DEVICE)
    _tensor(a, slot, data or None, _dtype(name) if name else NO_DTYPE, shape,
            strides, memory, t.device.device_id)
    keep.append(capsule)


# Exact types -> how to describe them, filled as types are met (a
# subclass of ndarray or torch.Tensor is found by isinstance once).
KINDS = {}


def _kind(value):
    t = type(value)
    k = KINDS.get(t)
    if k is None:
        np = sys.modules.get("numpy")
        torch = sys.modules.get("torch")
        if np is not None and isinstance(value, np.ndarray):
            k = _numpy
        elif torch is not None and isinstance(value, torch.Tensor):
            k = _torch
        elif hasattr(value, "__dlpack__"):
            k = _dlpack
        elif isinstance(value, numbers.Integral):
            k = _int
        elif isinstance(value, numbers.Real):
            k = _float
        else:
            return None  # refused, and not remembered
        KINDS[t] = k
    return k


def describer(value, a):
    """The function that fills tilec_arg `a` from `value`, called as
    f(a, slot, value, notes, keep): `slot` holds a's buffers, `notes`
    gets what the runtime's message should add about an array it cannot
    take, `keep` what must live until the launch returns.  TypeError for
    a value that is neither a tensor nor a number.  KINDS.get(type(value))
    finds it first for the types met before."""
    k = _kind(value)
    if k is None:
        raise TypeError("%s: a tensor (NumPy, torch, DLPack) or a number, not %s"
                    % ("argument '%s'" % a.name.decode() if a.name
                       else "an argument by position", type(value).__name__))
    return k



def current_stream(values):
    """torch's current stream (a CUstream or hipStream_t, as an int) on
    the GPU of the first torch tensor on a GPU among `values` (ROCm
    builds of torch name theirs cuda too); None, the default stream,
    when there is none."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    for v in values:
        if isinstance(v, torch.Tensor) and v.is_cuda:
            # What torch's own launches read: an int, without making a
            # torch.cuda.Stream object each call.
            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
            if raw is not None:
                return raw(v.get_device())
            return torch.cuda.current_stream(v.device).cuda_stream
    return None


_looked = []
SYSTEM_CUDA = "/usr/local/cuda"


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
            os.path.exists(os.path.join(SYSTEM_CUDA, "include",
                                        "cuda_fp16.h")):
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
